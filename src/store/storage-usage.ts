/**
 * The storage counters of a project (migration 007): bytes held, and bytes accepted on the current
 * UTC day. The cargo insert moves them in its own transaction (`acceptedCargoStatements`, in the
 * group commit's `Database.writeAll`); results move them through triggers: on PostgreSQL they
 * append to `storage_changes`, which this folds in; on SQLite they move the counter row (migration
 * 018). Nothing here sums a table: a read is one row plus the project's few changes not folded yet.
 */
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { DAY_MS } from '../domain/clock.js';
import type { Database, Dialect } from './database.js';
import type { Schema } from './schema.js';

export function utcDayStart(at: number): number {
  return at - (at % DAY_MS);
}

export interface StorageUsage {
  heldBytes: number;
  /** The UTC day `dayBytes` counts (epoch ms of its midnight). */
  day: number;
  dayBytes: number;
}

/**
 * The statements that count accepted cargo in the transaction that inserts them (the group
 * commit's, Database.writeAll), and fold the results' changes of the same projects. The counter
 * rows are locked in project order, in the first statement, so flushes of several API processes
 * never deadlock; the change rows of a project are only deleted under that lock. None needs the
 * result of another, so a SQLite write thread runs them all from one message.
 */
export function acceptedCargoStatements(
  database: Database,
  accepted: { projectId: string; bytes: number; at: number }[],
): CompiledQuery[] {
  const db = database.write;
  const byProject = new Map<string, { bytes: number; at: number }>();
  for (const { projectId, bytes, at } of accepted) {
    const sum = byProject.get(projectId);
    if (sum) {
      sum.bytes += bytes;
      sum.at = Math.max(sum.at, at);
    } else byProject.set(projectId, { bytes, at });
  }
  if (byProject.size === 0) return [];
  const projectIds = [...byProject.keys()].sort();
  const count = db
    .insertInto('project_storage')
    .values(
      projectIds.map((id) => {
        const { bytes, at } = byProject.get(id) as { bytes: number; at: number };
        return { project_id: id, held_bytes: bytes, day: utcDayStart(at), day_bytes: bytes };
      }),
    )
    .onConflict((oc) =>
      oc.column('project_id').doUpdateSet({
        held_bytes: sql`project_storage.held_bytes + excluded.held_bytes`,
        day_bytes: sql`case when project_storage.day = excluded.day
          then project_storage.day_bytes + excluded.day_bytes else excluded.day_bytes end`,
        day: sql`case when project_storage.day > excluded.day then project_storage.day else excluded.day end`,
      }),
    )
    .compile();
  return [count, ...foldChanges(db, database.dialect, projectIds)];
}

/**
 * The statement that moves a project's held bytes by `delta` (a file barge made is added, a deleted
 * file released), in the caller's transaction; the day's accepted bytes do not move.
 */
export function heldBytesStatements(database: Database, projectId: string, delta: number): CompiledQuery[] {
  if (delta === 0) return [];
  return [
    database.write
      .insertInto('project_storage')
      .values({ project_id: projectId, held_bytes: delta, day: 0, day_bytes: 0 })
      .onConflict((oc) =>
        oc.column('project_id').doUpdateSet({ held_bytes: sql`project_storage.held_bytes + excluded.held_bytes` }),
      )
      .compile(),
  ];
}

/**
 * Adds the projects' change rows to their held bytes and deletes them, in one statement, so a
 * change a concurrent collector adds meanwhile is either folded or left for the next fold, never
 * deleted unfolded. Only PostgreSQL has change rows: SQLite's triggers move the counters
 * themselves (migration 018).
 */
function foldChanges(db: Kysely<Schema>, dialect: Dialect, projectIds: string[]): CompiledQuery[] {
  if (dialect !== 'postgres') return [];
  return [
    sql`with gone as (delete from storage_changes where project_id in (${sql.join(projectIds)}) returning project_id, bytes),
      sums as (select project_id, sum(bytes) as bytes from gone group by project_id)
      update project_storage set held_bytes = project_storage.held_bytes + sums.bytes
      from sums where project_storage.project_id = sums.project_id`.compile(db),
  ];
}

/** A project's counters now: its row, plus the results' changes not folded in yet. */
export async function readStorageUsage(database: Database, projectId: string): Promise<StorageUsage> {
  const row = await database.read
    .selectFrom('project_storage')
    .select(['held_bytes', 'day', 'day_bytes'])
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  const pending = await database.read
    .selectFrom('storage_changes')
    .select((eb) => eb.fn.sum<number>('bytes').as('bytes'))
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return {
    heldBytes: Number(row?.held_bytes ?? 0) + Number(pending?.bytes ?? 0),
    day: Number(row?.day ?? 0),
    dayBytes: Number(row?.day_bytes ?? 0),
  };
}

/** PostgreSQL: the size of the database on disk (what the server can tell about its storage). */
export async function databaseSizeBytes(database: Database): Promise<number> {
  const { rows } = await sql<{ size: string }>`select pg_database_size(current_database()) as size`.execute(
    database.read,
  );
  return Number(rows[0]?.size ?? 0);
}
