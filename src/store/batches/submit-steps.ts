/** The submitter's own records on a leased batch: the submit intent and the adapter's state between steps. */
import type { Database } from '../database.js';
import { type BatchLease, leasedBatchUpdate } from '../leases.js';

/**
 * Records that a call which may create a provider job is about to be made (kept if already set,
 * so the first attempt's time bounds the search for a job a lost call created). Lease-guarded:
 * false if the lease was lost, and then no call may be made.
 */
export async function recordSubmitIntent(database: Database, input: BatchLease & { now: number }): Promise<boolean> {
  const updated = await leasedBatchUpdate(database, input)
    .set((eb) => ({ submit_started_at: eb.fn.coalesce('submit_started_at', eb.val(input.now)), updated_at: input.now }))
    .where('status', '=', 'submitting')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Keeps what the adapter handed back after a step short of the job. Lease-guarded, as above. */
export async function saveProviderState(
  database: Database,
  input: BatchLease & { state: string; now: number },
): Promise<boolean> {
  const updated = await leasedBatchUpdate(database, input)
    .set({ provider_state: input.state, updated_at: input.now })
    .where('status', '=', 'submitting')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Which of these provider job ids a batch has recorded already (they belong to it, not to a lost call). */
export async function recordedJobIds(database: Database, provider: string, jobIds: string[]): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const rows = await database.read
    .selectFrom('batches')
    .select('job_id')
    .where('provider', '=', provider)
    .where('job_id', 'in', jobIds)
    .execute();
  return new Set(rows.map((r) => r.job_id as string));
}
