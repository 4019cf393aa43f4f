import type { ModelInput } from '../domain/cargo-request.js';
import { customIdFor, paddingId } from '../domain/custom-ids.js';
import { retryBackoffMs } from '../domain/polling.js';
import type { BatchRequest } from '../providers/provider.js';
import { type BatchRow, batchCargoRequests, markBatchSubmitted, rescheduleBatch } from '../store/batches.js';
import { isDatabaseUnavailable, retryThroughOutage } from '../store/outage.js';
import type { PipelineContext } from './context.js';

/** The cheapest valid request, sent only to reach a provider's minimum batch size. */
const PADDING_INPUT: ModelInput = { max_tokens: 1, messages: [{ role: 'user', content: '.' }] };

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
    await rescheduleBatch(ctx.database.write, {
      batchId: batch.id,
      workerId: ctx.workerId,
      nextCheckAt: now + retryBackoffMs(batch.attempts),
      now,
      error: `provider '${batch.provider}' is not configured`,
    });
    return;
  }
  try {
    // The request list lives only while it is built and handed over, a bounded number at a time.
    const { jobId, requestCount, padding } = await ctx.budgets.submissions.run(batch.request_bytes, async () => {
      const { requests, padding } = await providerRequests(ctx, batch, provider.limits.minRequests);
      // A turn for the rest of the event loop: reading and parsing a large batch is synchronous,
      // and so may be what the provider does with it next.
      await new Promise((resolve) => setImmediate(resolve));
      const { jobId } = await provider.submit({ batchId: batch.id, model: batch.provider_model, requests });
      return { jobId, requestCount: requests.length, padding };
    });
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
    await retryThroughOutage(() => rescheduleBatch(ctx.database.write, retry), ctx.settings.leaseMs);
  }
}

/** The batch's provider requests, in cargo order, padded up to the provider's minimum. */
async function providerRequests(
  ctx: PipelineContext,
  batch: BatchRow,
  minRequests: number,
): Promise<{ requests: BatchRequest[]; padding: number }> {
  const requests: BatchRequest[] = [];
  for (const cargo of await batchCargoRequests(ctx.database.read, batch.id)) {
    const { requests: inputs } = JSON.parse(cargo.request) as { requests: { modelInput: ModelInput }[] };
    inputs.forEach((r, i) => {
      requests.push({ customId: customIdFor(cargo.id, cargo.is_records === 1 ? i : null), input: r.modelInput });
    });
  }
  const padding = Math.max(0, minRequests - requests.length);
  for (let i = 0; i < padding; i++) requests.push({ customId: paddingId(i), input: PADDING_INPUT });
  return { requests, padding };
}
