/** Sending a leased `submitting` batch to its provider, without ever losing or doubling a job. */
import { type FoundJob, type Provider, ProviderError } from '../providers/provider.js';
import type { BatchRow } from '../store/batches/due.js';
import { refillBatch } from '../store/batches/form.js';
import { markBatchSubmitted } from '../store/batches/mark-submitted.js';
import { countProviderBatches } from '../store/batches/provider-batches.js';
import { batchRequests } from '../store/batches/requests.js';
import { markBatchEnded, rescheduleBatch } from '../store/batches/reschedule.js';
import { recordedJobIds, recordSubmitIntent, saveProviderState } from '../store/batches/submit-steps.js';
import { isDatabaseUnavailable, retryThroughOutage } from '../store/outage.js';
import { countCargoMoves, type PipelineContext } from './context.js';
import { failBatch } from './fail-batch.js';
import { cleanUpJob, jobRefOf } from './job-ref.js';
import { judgeProviderFailure } from './provider-errors.js';

/** How soon a batch waiting for a job slot looks again: a count of running batches is cheap. */
const JOB_SLOT_WAIT_MS = 5_000;

/** Steps one submission may take (OpenAI: upload, then create); more means an adapter is looping. */
const MAX_STEPS = 4;

class LeaseLost extends Error {}

/**
 * Submits a leased batch. No transaction is open during a provider call.
 *
 * A provider may accept a create call whose answer never reaches barge (the process is killed
 * while the call is open). So the intent is recorded before the first call (`submit_started_at`);
 * a worker that finds it set asks the provider for the job that call may have made
 * (`findSubmitted`) and adopts it, or cancels what it cannot tell apart, before creating another.
 * A job the provider accepted is recorded even if the lease lapsed meanwhile (markBatchSubmitted is
 * guarded by the batch having no job, not by the lease); if another worker recorded a different
 * job first, this one is canceled, so no second job runs unwatched.
 */
export async function submitBatch(ctx: PipelineContext, batch: BatchRow): Promise<void> {
  const provider = ctx.providers.get(batch.provider);
  if (!provider) {
    await retryLater(ctx, batch, `provider '${batch.provider}' is not configured`, ctx.clock.now() + 60_000);
    return;
  }
  // The adapter's state as the last persisted step left it (what a failed batch leaves to clean up),
  // and whether a failure came from a submit step (rather than a lookup or the store).
  const progress = { state: batch.provider_state, inStep: false };
  try {
    if (batch.submit_started_at !== null && (await adoptLostJob(ctx, provider, batch))) return;
    if (await waitsForJobSlot(ctx, provider, batch)) return;
    if (batch.attempts > 0 && batch.submit_started_at === null && batch.provider_state === null) {
      if (!(await refill(ctx, provider, batch))) return;
    }
    const size = await recordSubmitIntent(ctx.database, {
      batchId: batch.id,
      workerId: ctx.workerId,
      now: ctx.clock.now(),
    });
    if (!size) throw new LeaseLost();
    if (size.cargo_count === 0) {
      await endCanceledBatch(ctx, batch);
      return;
    }
    await submitSteps(ctx, provider, { ...batch, ...size }, progress);
  } catch (err) {
    if (err instanceof LeaseLost) return;
    // A database outage is reported once by the store; the batch is given back when it is over.
    if (isDatabaseUnavailable(err)) {
      await retryLater(ctx, batch, String((err as Error).message), ctx.clock.now() + 1000);
      return;
    }
    const verdict = judgeProviderFailure(err, batch, ctx.clock.now());
    if (verdict.action === 'fail') {
      await failBatch(ctx, batch, `errored: ${verdict.error}`);
      // No job was made (the create was refused): what the earlier steps left (OpenAI's uploaded
      // file, Bedrock's staged input) goes, as it would once a job ended.
      await cleanUpJob(ctx, provider, batch.id, jobRefOf(ctx.database, batch, { jobId: '', state: progress.state }));
      return;
    }
    ctx.log.warn({ batch: batch.id, provider: batch.provider, err }, 'batch submission failed; will retry');
    // A refusal answered to this try's first create: no job exists, and none was lost before it.
    const noJobMade =
      progress.inStep && batch.submit_started_at === null && err instanceof ProviderError && err.kind !== 'retryable';
    await retryLater(ctx, batch, verdict.error, verdict.at, verdict.refused, noJobMade);
  }
}

/**
 * A batch that waited after its provider turned it away (a queue cap's 429, a refusal) takes its
 * contents again before it tries once more, round robin with the cargo other projects sent
 * meanwhile: so a later project's cargo rides in the next job the provider accepts, not behind the
 * waiting batch. Only done when no job can hold the batch's requests (no create's answer lost,
 * nothing uploaded yet). Its new size is read when the submission's intent is recorded. False when
 * the lease was lost.
 */
function refill(ctx: PipelineContext, provider: Provider, batch: BatchRow): Promise<boolean> {
  return refillBatch(
    ctx.database,
    { batchId: batch.id, workerId: ctx.workerId },
    {
      provider: batch.provider,
      providerModel: batch.provider_model,
      maxRequests: Math.min(provider.limits.maxRequests, ctx.settings.batchMaxSize),
      maxBytes: provider.limits.maxBytes,
      now: ctx.clock.now(),
    },
  );
}

/**
 * A batch past its provider's limit on jobs in progress (Bedrock's account quota) waits its turn:
 * looked at again shortly, without an attempt counted, so waiting never fails it. Processes that
 * check at once may pass the limit together; the provider's own refusal (a quota error, retried as
 * rate limited) then holds the extra batch back.
 */
async function waitsForJobSlot(ctx: PipelineContext, provider: Provider, batch: BatchRow): Promise<boolean> {
  const limit = provider.limits.maxJobsInProgress;
  if (limit === undefined || (await countProviderBatches(ctx.database, provider.name)).processing < limit) return false;
  const now = ctx.clock.now();
  await rescheduleBatch(ctx.database, {
    batchId: batch.id,
    workerId: ctx.workerId,
    nextCheckAt: now + JOB_SLOT_WAIT_MS,
    now,
  });
  return true;
}

/** Every cargo of the batch was canceled before its submission began: it ends without a job. */
async function endCanceledBatch(ctx: PipelineContext, batch: BatchRow): Promise<void> {
  await markBatchEnded(ctx.database, {
    batchId: batch.id,
    workerId: ctx.workerId,
    reason: 'canceled',
    now: ctx.clock.now(),
  });
  ctx.log.info({ batch: batch.id, provider: batch.provider }, 'every cargo of the batch was canceled; no job made');
}

/** Requests the job holds: the batch's, padded up to the provider's minimum. */
function jobRequestCount(batch: BatchRow, provider: Provider): number {
  return Math.max(batch.request_count, provider.limits.minRequests);
}

async function submitSteps(
  ctx: PipelineContext,
  provider: Provider,
  batch: BatchRow,
  progress: { state: string | null; inStep: boolean },
): Promise<void> {
  // The requests stream from the store as the provider consumes them; a bounded number of
  // batches are handed over at a time, as a provider may hold what it was given until it sends.
  const requestCount = jobRequestCount(batch, provider);
  for (let step = 0; step < MAX_STEPS; step++) {
    progress.inStep = true;
    const result = await ctx.budgets.submissions.of(batch.provider).run(batch.request_bytes, () =>
      provider.submit({
        batchId: batch.id,
        model: batch.provider_model,
        requestCount,
        requests: batchRequests(ctx.database, batch.id, requestCount),
        state: progress.state,
      }),
    );
    progress.inStep = false;
    if (result.kind === 'progress') {
      const saved = await saveProviderState(ctx.database, {
        batchId: batch.id,
        workerId: ctx.workerId,
        state: result.state,
        now: ctx.clock.now(),
      });
      if (!saved) throw new LeaseLost();
      progress.state = result.state;
      continue;
    }
    await recordJob(ctx, provider, batch, { jobId: result.jobId, state: result.state }, requestCount);
    return;
  }
  throw new Error(`provider '${provider.name}' took more than ${MAX_STEPS} steps to submit`);
}

/**
 * The job a lost create call made, if the provider can show it: adopted when it is one no batch
 * recorded (exactly tagged with this batch, or the only candidate); candidates that cannot be told
 * apart are canceled, and the batch is submitted afresh. True when a job was adopted.
 */
async function adoptLostJob(ctx: PipelineContext, provider: Provider, batch: BatchRow): Promise<boolean> {
  const requestCount = jobRequestCount(batch, provider);
  const found = await provider.findSubmitted({
    batchId: batch.id,
    requestCount,
    startedAt: batch.submit_started_at ?? batch.created_at,
    state: batch.provider_state,
    until: ctx.clock.now(),
  });
  const recorded = await recordedJobIds(
    ctx.database,
    provider.name,
    found.map((f) => f.jobId),
  );
  const unrecorded = found.filter((f) => !recorded.has(f.jobId));
  if (unrecorded.length === 0) return false;
  const exact = unrecorded.filter((f) => f.match === 'exact');
  const adopt: FoundJob | undefined = exact[0] ?? (unrecorded.length === 1 ? unrecorded[0] : undefined);
  for (const job of unrecorded) {
    if (job === adopt) continue;
    ctx.log.warn({ batch: batch.id, job: job.jobId }, 'canceling a job a lost submission may have created');
    await provider.cancel(jobRefOf(ctx.database, batch, job));
  }
  if (!adopt) return false;
  ctx.log.warn({ batch: batch.id, job: adopt.jobId, match: adopt.match }, 'adopting the job a lost submission created');
  return recordJob(ctx, provider, batch, adopt, requestCount);
}

/** Records the job; cancels it when another worker recorded a different one first. */
async function recordJob(
  ctx: PipelineContext,
  provider: Provider,
  batch: BatchRow,
  job: { jobId: string; state: string | null },
  requestCount: number,
): Promise<boolean> {
  const submittedAt = ctx.clock.now();
  const marked = await markBatchSubmitted(ctx.database, {
    batchId: batch.id,
    jobId: job.jobId,
    providerState: job.state,
    paddingCount: requestCount - batch.request_count,
    now: submittedAt,
    deadlineAt: submittedAt + provider.limits.completionWindowMs,
  });
  if (marked.recorded) {
    ctx.log.info({ batch: batch.id, job: job.jobId, requests: requestCount }, 'batch submitted');
    countCargoMoves(ctx.metrics, batch, new Map([['processing', batch.cargo_count]]));
    return true;
  }
  if (marked.otherBatch !== undefined) {
    ctx.log.warn({ batch: batch.id, job: job.jobId, owner: marked.otherBatch }, 'job belongs to another batch');
    return false;
  }
  if (marked.jobId !== job.jobId) {
    ctx.log.warn(
      { batch: batch.id, job: job.jobId, recorded: marked.jobId },
      'another worker recorded a job for this batch first; canceling this duplicate',
    );
    await provider.cancel(jobRefOf(ctx.database, batch, job));
  }
  return true;
}

async function retryLater(
  ctx: PipelineContext,
  batch: BatchRow,
  error: string,
  at: number,
  refused = false,
  noJobMade = false,
): Promise<void> {
  const retry = {
    batchId: batch.id,
    workerId: ctx.workerId,
    nextCheckAt: at,
    now: ctx.clock.now(),
    error,
    refused,
    noJobMade,
  };
  await retryThroughOutage(() => rescheduleBatch(ctx.database, retry), ctx.settings.leaseMs);
}
