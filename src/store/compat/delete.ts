/**
 * Deleting provider-compatible batches: hidden at once, their rows (staged cargo, request list)
 * deleted in bounded chunks, each its own transaction, never in one long one; what a crash leaves
 * hidden the sweeper finishes. Their cargo stay.
 */
import { deleteInChunks } from '../chunks.js';
import type { Database } from '../database.js';
import { heldByCreator, lapsedCreation } from './batches.js';

/**
 * Rows of a batch deleted per statement (each its own transaction): a request list's rows are
 * narrow; a staged cargo row holds its request (2.5 KB on average in a full 256 MB batch), whose
 * pages a delete frees.
 */
const DROP_CHUNK = { compat_batch_requests: 2000, compat_staged_cargo: 200 } as const;

/** Deletes a batch's rows of `table`, a chunk per statement, so no one transaction holds the writer long. */
export async function dropBatchRows(
  database: Database,
  table: 'compat_staged_cargo' | 'compat_batch_requests',
  batchId: string,
): Promise<void> {
  await deleteInChunks(database, { table, key: 'batch_id', id: batchId, order: 'position', size: DROP_CHUNK[table] });
}

/** Which batches a deletion takes (each in one conditional statement, so a deletion never races a creator). */
export type CompatDeletion =
  /** The sweeper: a batch being created (its publish not begun) whose creator's lease lapsed. */
  | { kind: 'abandoned' }
  /** The creator giving its own batch up. */
  | { kind: 'given_up'; lockedBy: string }
  /** DELETE of an ended batch. */
  | { kind: 'ended' }
  /** A visible batch past its retention. */
  | { kind: 'expired' };

/**
 * Deletes a batch: hidden at once (`deleted_at`, and a creator's lease taken from it: its next
 * step throws CompatLeaseLost), then its staged rows and request list in chunks, then its row. A
 * crash in between leaves it hidden, and the sweeper finishes (purgeDeletedCompatBatch). Its
 * cargo stay. False when the batch is not one `which` takes.
 */
export async function deleteCompatBatch(
  database: Database,
  batchId: string,
  which: CompatDeletion,
  now: number,
): Promise<boolean> {
  let query = database.write
    .updateTable('compat_batches')
    .set({ deleted_at: now, locked_by: null, locked_until: null })
    .where('id', '=', batchId)
    .where('deleted_at', 'is', null);
  // A batch whose publish began is committed to: never given up, the sweeper finishes it.
  if (which.kind === 'abandoned') {
    query = query.where((eb) => lapsedCreation(eb, now, false));
  } else if (which.kind === 'given_up') {
    query = query.where((eb) => heldByCreator(eb, { batchId, lockedBy: which.lockedBy }, false));
  } else if (which.kind === 'ended') {
    query = query.where('state', '=', 'ended');
  } else {
    query = query.where('state', '<>', 'creating');
  }
  if (Number((await query.executeTakeFirst()).numUpdatedRows) === 0) return false;
  await purgeDeletedCompatBatch(database, batchId);
  return true;
}

/** Deletes the rows of a batch hidden by deleteCompatBatch, in chunks, then the batch itself. */
export async function purgeDeletedCompatBatch(database: Database, batchId: string): Promise<void> {
  await dropBatchRows(database, 'compat_staged_cargo', batchId);
  await dropBatchRows(database, 'compat_batch_requests', batchId);
  await database.write
    .deleteFrom('compat_batches')
    .where('id', '=', batchId)
    .where('deleted_at', 'is not', null)
    .execute();
}

/**
 * Batches hidden for deletion before `before` whose rows are still there, for the sweeper: a
 * deletion left by a crash, not one a process is going through now.
 */
export async function deletedCompatBatches(database: Database, before: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_batches')
    .select('id')
    .where('deleted_at', '<', before)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
