/** A batch's provider job as the provider seam sees it (src/providers/provider.ts JobRef). */
import type { JobRef, Provider } from '../providers/provider.js';
import type { BatchRow } from '../store/batches/due.js';
import { batchCustomIds, batchRequests } from '../store/batches/requests.js';
import type { Database } from '../store/database.js';
import type { PipelineContext } from './context.js';

/** The recorded job of a batch; `job` names another one (a duplicate, a lost submission's) to cancel. */
export function jobRefOf(
  database: Database,
  batch: BatchRow,
  job: { jobId: string; state: string | null } = { jobId: batch.job_id ?? '', state: batch.provider_state },
): JobRef {
  const requestCount = batch.request_count + batch.padding_count;
  return {
    batchId: batch.id,
    jobId: job.jobId,
    model: batch.provider_model,
    requestCount,
    submittedAt: batch.submitted_at ?? batch.submit_started_at ?? batch.created_at,
    canceledAt: batch.canceled_at,
    state: job.state,
    requests: () => batchRequests(database, batch.id, requestCount),
    customIds: () => batchCustomIds(database, batch.id, requestCount),
  };
}

/**
 * Removes what a job left at its provider (OpenAI's input file, Bedrock's staged input), best
 * effort: a failure is logged, never raised, as the batch's own outcome is already recorded.
 */
export async function cleanUpJob(
  ctx: PipelineContext,
  provider: Provider,
  batchId: string,
  job: JobRef,
): Promise<void> {
  await provider.cleanup(job).catch((err) => ctx.log.warn({ batch: batchId, err }, 'provider cleanup failed'));
}
