/** The submitter's own records on a leased batch: the submit intent and the adapter's state between steps. */
import type { Database } from '../database.js';
import { type BatchLease, leasedBatchUpdate } from '../leases.js';

/** A batch's size once its submission has begun: fixed from then on (cancels refuse its cargo). */
export interface SubmittedSize {
  cargo_count: number;
  request_count: number;
  request_bytes: number;
}

/**
 * Records that a call which may create a provider job is about to be made (kept if already set,
 * so the first attempt's time bounds the search for a job a lost call created). Lease-guarded:
 * null if the lease was lost, and then no call may be made. Answers the batch's size as it is now:
 * cargo canceled since the batch was claimed have left it (store/cargo/cancel.ts), and none can
 * leave it after this.
 */
export async function recordSubmitIntent(
  database: Database,
  input: BatchLease & { now: number },
): Promise<SubmittedSize | null> {
  const row = await leasedBatchUpdate(database, input)
    .set((eb) => ({ submit_started_at: eb.fn.coalesce('submit_started_at', eb.val(input.now)), updated_at: input.now }))
    .where('status', '=', 'submitting')
    .returning(['cargo_count', 'request_count', 'request_bytes'])
    .executeTakeFirst();
  return row ?? null;
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
