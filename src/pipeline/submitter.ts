import { retryBackoffMs } from '../domain/polling.js';
import type { BatchRow } from '../store/batches/due.js';
import { markBatchSubmitted } from '../store/batches/mark-submitted.js';
import { batchRequests } from '../store/batches/requests.js';
import { rescheduleBatch } from '../store/batches/reschedule.js';
import { isDatabaseUnavailable, retryThroughOutage } from '../store/outage.js';
import { countCargoMoves, type PipelineContext } from './context.js';

/**
 * Sends a leased `submitting` batch to its provider. No transaction is open during the call. The
 * job is recorded even if the lease lapsed meanwhile (markBatchSubmitted); if another worker
 * recorded a different job for the batch first, this one is canceled, so no second job runs
 * unwatched.
 */
export async function submitBatch(ctx: PipelineContext, batch: BatchRow): Promise<void> {
  const provider = ctx.providers.get(batch.provider);
  const now = ctx.clock.now();
  if (!provider) {
    await rescheduleBatch(ctx.database, {
      batchId: batch.id,
      workerId: ctx.workerId,
      nextCheckAt: now + retryBackoffMs(batch.attempts),
      now,
      error: `provider '${batch.provider}' is not configured`,
    });
    return;
  }
  try {
    // The requests stream from the store as the provider consumes them; a bounded number of
    // batches are handed over at a time, as a provider may hold what it was given until it sends.
    const requestCount = Math.max(batch.request_count, provider.limits.minRequests);
    const padding = requestCount - batch.request_count;
    const { jobId } = await ctx.budgets.submissions.run(batch.request_bytes, () =>
      provider.submit({
        batchId: batch.id,
        model: batch.provider_model,
        requestCount,
        requests: batchRequests(ctx.database, batch.id, requestCount),
      }),
    );
    const submittedAt = ctx.clock.now();
    const marked = await markBatchSubmitted(ctx.database, {
      batchId: batch.id,
      jobId,
      paddingCount: padding,
      now: submittedAt,
      deadlineAt: submittedAt + provider.limits.completionWindowMs,
    });
    if (!marked.recorded && marked.jobId !== jobId) {
      ctx.log.warn(
        { batch: batch.id, job: jobId, recorded: marked.jobId },
        'another worker recorded a job for this batch first; canceling this duplicate',
      );
      await provider.cancel(jobId);
      return;
    }
    ctx.log.info({ batch: batch.id, job: jobId, requests: requestCount, padding }, 'batch submitted');
    if (marked.recorded) countCargoMoves(ctx.metrics, batch, new Map([['processing', batch.cargo_count]]));
  } catch (err) {
    // A database outage is reported once by the store; the batch is given back when it is over.
    if (!isDatabaseUnavailable(err)) ctx.log.warn({ batch: batch.id, err }, 'batch submission failed; will retry');
    const retry = {
      batchId: batch.id,
      workerId: ctx.workerId,
      nextCheckAt: ctx.clock.now() + retryBackoffMs(batch.attempts),
      now: ctx.clock.now(),
      error: err instanceof Error ? err.message : String(err),
    };
    await retryThroughOutage(() => rescheduleBatch(ctx.database, retry), ctx.settings.leaseMs);
  }
}
