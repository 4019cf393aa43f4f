/** What the sweeper of the provider-compatible endpoints looks for among batches, and when it is due next. */
import { sql } from 'kysely';
import type { Database } from '../database.js';
import { type CompatBatchRow, lapsedCreation } from './batches.js';

/** Batches being created whose creator's lease lapsed (a crash, a client gone): for the sweeper. */
export async function abandonedCompatBatches(database: Database, now: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_batches')
    .select('id')
    .where((eb) => lapsedCreation(eb, now, false))
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Batches whose cancel was asked before `before` and not seen through (a crash mid-cancel). */
export async function unfinishedCompatCancels(
  database: Database,
  before: number,
  limit: number,
): Promise<CompatBatchRow[]> {
  return database.read
    .selectFrom('compat_batches')
    .selectAll()
    .where('cancel_requested_at', '<', before)
    .where('cancel_done', '=', 0)
    .where('deleted_at', 'is', null)
    .limit(limit)
    .execute();
}

/** Batches made whole (or given up) that still have staged rows (a crash right after their creation). */
export async function batchesWithLeftoverStaging(database: Database, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_staged_cargo as s')
    .innerJoin('compat_batches as b', 'b.id', 's.batch_id')
    .select('s.batch_id')
    .distinct()
    .where('b.state', '<>', 'creating')
    .limit(limit)
    .execute();
  return rows.map((r) => r.batch_id);
}

/** Visible batches created before `before` (past their retention). */
export async function expiredCompatBatches(database: Database, before: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_batches')
    .select('id')
    .where('created_at', '<', before)
    .where('state', '<>', 'creating')
    .where('deleted_at', 'is', null)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * When the sweeper has batch work next: a creator's lease lapses, a cancel is due to be seen
 * through (`cancelGraceMs` after it was asked), a batch passes its retention.
 */
export async function nextCompatBatchDue(
  database: Database,
  input: { cancelGraceMs: number; retentionMs: number },
): Promise<number | null> {
  const { rows } = await sql<{ at: string | number | null }>`
    select min(at) as at from (
      select min(locked_until) as at from compat_batches where state = 'creating'
      union all select min(cancel_requested_at) + ${input.cancelGraceMs} as at from compat_batches
        where cancel_requested_at is not null and cancel_done = 0
      union all select min(created_at) + ${input.retentionMs} as at from compat_batches
      union all select min(deleted_at) as at from compat_batches where deleted_at is not null
    ) due`.execute(database.read);
  const at = rows[0]?.at;
  return at == null ? null : Number(at);
}
