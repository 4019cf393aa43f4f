/** Bulk recoveries (migration 021): counting a set, making one, reading and canceling them. */
import type { Selectable } from 'kysely';
import type { RecoverableCargoStatus, RecoveryStatus } from '../../domain/lifecycle.js';
import { nextTurn } from '../../turns.js';
import type { Database } from '../database.js';
import { resultsStoredNotice } from '../notify.js';
import type { RecoveriesTable } from '../schema.js';
import { type CargoSet, readSetPage } from './cargo-set.js';

export interface Recovery {
  id: string;
  projectId: string;
  status: RecoveryStatus;
  cargoStatus: RecoverableCargoStatus;
  since: number;
  until: number;
  total: number;
  done: number;
  redelivered: number;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

export function toRecovery(row: Selectable<RecoveriesTable>): Recovery {
  return {
    id: row.id,
    projectId: row.project_id,
    status: row.status,
    cargoStatus: row.cargo_status,
    since: Number(row.since),
    until: Number(row.until),
    total: row.total,
    done: row.done,
    redelivered: row.redelivered,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  };
}

/** Candidates looked at per read while counting. */
const COUNT_PAGE = 2000;

/**
 * How many cargo the set holds, a bounded page at a time with a turn of the event loop between
 * pages (a SQLite read holds the main thread): linear in the candidates, whatever their number.
 */
export async function countCargoSet(database: Database, set: CargoSet): Promise<number> {
  let count = 0;
  let after: string | null = null;
  for (;;) {
    const page = await readSetPage(database.read, set, after, COUNT_PAGE);
    count += page.cargo.length;
    if (page.exhausted) return count;
    after = page.lastId;
    await nextTurn();
  }
}

/**
 * A new recovery, running from now (its set was counted with `fixedAt` = now); the workers of
 * other processes are woken at its commit, as for a redelivery.
 */
export async function insertRecovery(
  database: Database,
  input: { id: string; set: CargoSet; total: number },
): Promise<Recovery> {
  const now = input.set.fixedAt;
  const empty = input.total === 0;
  return database.write.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('recoveries')
      .values({
        id: input.id,
        project_id: input.set.projectId,
        // Nothing to do: completed at once.
        status: empty ? 'completed' : 'running',
        cargo_status: input.set.cargoStatus,
        since: input.set.since,
        until: input.set.until,
        total: input.total,
        done: 0,
        redelivered: 0,
        cursor: null,
        next_run_at: now,
        locked_by: null,
        locked_until: null,
        created_at: now,
        updated_at: now,
        finished_at: empty ? now : null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (!empty) for (const notice of resultsStoredNotice(database)) await tx.executeQuery(notice);
    return toRecovery(row);
  });
}

export async function findRecovery(database: Database, projectId: string, id: string): Promise<Recovery | undefined> {
  const row = await database.read
    .selectFrom('recoveries')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row && toRecovery(row);
}

/** A project's newest recoveries, newest first. */
export async function listRecoveries(database: Database, projectId: string, limit: number): Promise<Recovery[]> {
  const rows = await database.read
    .selectFrom('recoveries')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toRecovery);
}

/**
 * Stops a running recovery: its lease is dropped and no chunk starts after this commits (on
 * PostgreSQL a chunk under way holds the row, so this waits for it and the answer counts it).
 * What it redelivered stays. A canceled one is answered as it is; a completed one is `finished`.
 */
export async function cancelRecovery(
  database: Database,
  input: { projectId: string; id: string; now: number },
): Promise<Recovery | 'not_found' | 'finished'> {
  const canceled = await database.write
    .updateTable('recoveries')
    .set({ status: 'canceled', finished_at: input.now, updated_at: input.now, locked_by: null, locked_until: null })
    .where('id', '=', input.id)
    .where('project_id', '=', input.projectId)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst();
  if (canceled) return toRecovery(canceled);
  const found = await findRecovery(database, input.projectId, input.id);
  if (!found) return 'not_found';
  return found.status === 'canceled' ? found : 'finished';
}
