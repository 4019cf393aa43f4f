/** The poller: a processing batch checked at its provider, canceled past its window, collected once it ended. */
import { nextPollAt } from '../domain/polling.js';
import type { BatchRow } from '../store/batches/due.js';
import { markBatchCanceled, markBatchEnded, rescheduleBatch } from '../store/batches/reschedule.js';
import { isDatabaseUnavailable, retryThroughOutage } from '../store/outage.js';
import { collectResults } from './collector.js';
import type { PipelineContext } from './context.js';
import { failBatch } from './fail-batch.js';
import { cleanUpJob, jobRefOf } from './job-ref.js';
import { judgeProviderFailure } from './provider-errors.js';

/**
 * Looks at a leased `processing` batch: cancels it once its completion window has closed, collects
 * its results once the provider says it ended, fails its cargo if the job failed as a whole, and
 * otherwise schedules the next look (nextPollAt). Resolves to whether results may have been stored
 * (false while the job is still running), so deliveries are looked for only then.
 */
export async function checkBatch(ctx: PipelineContext, batch: BatchRow): Promise<boolean> {
  const db = ctx.database;
  const provider = ctx.providers.get(batch.provider);
  const now = ctx.clock.now();
  const deadlineAt = batch.deadline_at ?? Number.POSITIVE_INFINITY;
  try {
    if (!provider || !batch.job_id) throw new Error(`provider '${batch.provider}' is not configured`);
    let job = jobRefOf(db, batch);
    if (job.canceledAt === null && now >= deadlineAt) {
      await provider.cancel(job);
      await markBatchCanceled(db, { batchId: batch.id, workerId: ctx.workerId, now });
      job = { ...job, canceledAt: now };
      ctx.log.warn({ batch: batch.id, job: batch.job_id }, 'completion window closed; job canceled');
    }
    const canceled = job.canceledAt !== null;

    const status = await provider.status(job);
    if (status.state === 'running') {
      await rescheduleBatch(db, {
        batchId: batch.id,
        workerId: ctx.workerId,
        now,
        polled: true,
        // A canceling job is checked often; it ends within minutes.
        nextCheckAt: canceled
          ? now + 5_000
          : nextPollAt({
              now,
              submittedAt: batch.submitted_at ?? now,
              expectedEndAt: status.expectedEndAt,
              deadlineAt,
            }),
      });
      return false;
    }
    if (status.state === 'failed') {
      await failBatch(ctx, batch, `errored: the provider failed the batch: ${status.message}`);
    } else {
      await collectResults(ctx, provider, batch, job, {
        canceledMeans: canceled ? 'expired' : 'canceled',
        unanswered: status.unanswered ?? null,
      });
      await markBatchEnded(db, {
        batchId: batch.id,
        workerId: ctx.workerId,
        reason: canceled ? 'expired' : 'ended',
        now: ctx.clock.now(),
      });
    }
    // What the job left at the provider (OpenAI's input file) goes; a failure here costs nothing.
    await cleanUpJob(ctx, provider, batch.id, job);
    return true;
  } catch (err) {
    const verdict = judgeProviderFailure(err, batch, ctx.clock.now());
    if (verdict.action === 'fail') {
      // The provider no longer answers for this job (gone, or the key lost access): its cargo fail.
      await failBatch(ctx, batch, `errored: ${verdict.error}`).catch((e) =>
        ctx.log.warn({ batch: batch.id, err: e }, 'failing the batch failed; will retry'),
      );
      return true;
    }
    // A database outage is reported once by the store; the batch is given back when it is over.
    if (!isDatabaseUnavailable(err)) ctx.log.warn({ batch: batch.id, err }, 'batch check failed; will retry');
    const retry = {
      batchId: batch.id,
      workerId: ctx.workerId,
      now: ctx.clock.now(),
      nextCheckAt: verdict.at,
      error: verdict.error,
      refused: verdict.refused,
    };
    await retryThroughOutage(() => rescheduleBatch(db, retry), ctx.settings.leaseMs);
    // A collection that failed part-way may have stored some results.
    return true;
  }
}
