/**
 * Canceling a provider-compatible batch: the cancel is recorded on the batch first, then every
 * cargo of it not yet sent to a provider is canceled with the cancel of POST /cargo/{id}/cancel
 * (store/cargo/cancel.ts), a chunk per transaction; those already with a provider finish. A crash
 * in the middle leaves the cancel recorded but not done, and the sweeper sees it through.
 */
import type { Clock } from '../domain/clock.js';
import { cancelManyCargo } from '../store/cargo/cancel.js';
import { type CompatBatchRow, markCompatCancelDone, requestCompatCancel } from '../store/compat/batches.js';
import { cancelableCargoIds } from '../store/compat/requests.js';
import type { Database } from '../store/database.js';

/** Records the cancel of an open batch and cancels what it can; an ended batch is left as it is. */
export async function cancelCompatBatch(database: Database, clock: Clock, row: CompatBatchRow): Promise<void> {
  if (row.state !== 'open') return;
  await requestCompatCancel(database, row.id, clock.now());
  await finishCompatCancel(database, clock, row);
}

/** Cancels every cargo of the batch still pending or batched, then marks the cancel done. */
export async function finishCompatCancel(database: Database, clock: Clock, row: CompatBatchRow): Promise<number> {
  let canceled = 0;
  for await (const cargoIds of cancelableCargoIds(database, row.id)) {
    canceled += await cancelManyCargo(database, { projectId: row.project_id, cargoIds, now: clock.now() });
  }
  await markCompatCancelDone(database, row.id);
  return canceled;
}
