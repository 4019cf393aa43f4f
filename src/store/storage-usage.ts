import { sql, type Transaction } from 'kysely';
import { DAY_MS } from '../domain/clock.js';
import type { Database, Dialect } from './database.js';
import type { Schema } from './schema.js';

/**
 * The storage counters of a project (migration 007): bytes held, and bytes accepted on the current
 * UTC day. The cargo insert moves them in its own transaction (`countAcceptedCargo`); results move
 * them through triggers that append to `storage_changes`, which this folds in. Nothing here sums a
 * table: a read is one row plus the project's few changes not folded yet.
 */

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
 * Counts accepted cargo in the transaction that inserts them (the group commit's), and folds the
 * results' changes of the same projects. The counter rows are locked in project order, in the
 * first statement, so flushes of several API processes never deadlock; the change rows of a
 * project are only deleted under that lock.
 */
export async function countAcceptedCargo(
  tx: Transaction<Schema>,
  dialect: Dialect,
  accepted: { projectId: string; bytes: number; at: number }[],
): Promise<void> {
  const byProject = new Map<string, { bytes: number; at: number }>();
  for (const { projectId, bytes, at } of accepted) {
    const sum = byProject.get(projectId);
    if (sum) {
      sum.bytes += bytes;
      sum.at = Math.max(sum.at, at);
    } else byProject.set(projectId, { bytes, at });
  }
  if (byProject.size === 0) return;
  const projectIds = [...byProject.keys()].sort();
  await tx
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
    .execute();

  const folded =
    dialect === 'postgres'
      ? (
          await sql<{ project_id: string; bytes: string }>`with gone as (
            delete from storage_changes where project_id in (${sql.join(projectIds)}) returning project_id, bytes)
            select project_id, sum(bytes) as bytes from gone group by project_id`.execute(tx)
        ).rows
      : await foldSqlite(tx, projectIds);
  for (const { project_id, bytes } of folded) {
    if (Number(bytes) === 0) continue;
    await tx
      .updateTable('project_storage')
      .set({ held_bytes: sql`held_bytes + ${Number(bytes)}` })
      .where('project_id', '=', project_id)
      .execute();
  }
}

/** SQLite has one writer: the sum and the delete see the same rows. */
async function foldSqlite(tx: Transaction<Schema>, projectIds: string[]) {
  const rows = await tx
    .selectFrom('storage_changes')
    .select(['project_id', (eb) => eb.fn.sum<number>('bytes').as('bytes')])
    .where('project_id', 'in', projectIds)
    .groupBy('project_id')
    .execute();
  if (rows.length > 0) await tx.deleteFrom('storage_changes').where('project_id', 'in', projectIds).execute();
  return rows;
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
