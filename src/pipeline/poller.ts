import { statusAfterResult } from '../domain/lifecycle.js';
import { nextPollAt, retryBackoffMs } from '../domain/polling.js';
import type { BatchRow } from '../store/batches/due.js';
import { markBatchCanceled, markBatchEnded, rescheduleBatch } from '../store/batches/reschedule.js';
import { isDatabaseUnavailable, retryThroughOutage } from '../store/outage.js';
import { cargoAwaitingResults } from '../store/results/awaiting.js';
import { storeResults } from '../store/results/store.js';
import { collectResults } from './collector.js';
import { countCargoMoves, type PipelineContext } from './context.js';

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
    let canceled = batch.canceled_at !== null;
    if (!canceled && now >= deadlineAt) {
      await provider.cancel(batch.job_id);
      await markBatchCanceled(db, { batchId: batch.id, workerId: ctx.workerId, now });
      canceled = true;
      ctx.log.warn({ batch: batch.id, job: batch.job_id }, 'completion window closed; job canceled');
    }

    const status = await provider.status(batch.job_id);
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
      await failAwaitingCargo(ctx, batch, `errored: the provider failed the batch: ${status.message}`);
      await markBatchEnded(db, { batchId: batch.id, workerId: ctx.workerId, reason: 'failed', now: ctx.clock.now() });
      return true;
    }
    await collectResults(ctx, provider, batch, { canceledMeans: canceled ? 'expired' : 'canceled' });
    await markBatchEnded(db, {
      batchId: batch.id,
      workerId: ctx.workerId,
      reason: canceled ? 'expired' : 'ended',
      now: ctx.clock.now(),
    });
    return true;
  } catch (err) {
    // A database outage is reported once by the store; the batch is given back when it is over.
    if (!isDatabaseUnavailable(err)) ctx.log.warn({ batch: batch.id, err }, 'batch check failed; will retry');
    const retry = {
      batchId: batch.id,
      workerId: ctx.workerId,
      now: ctx.clock.now(),
      nextCheckAt: ctx.clock.now() + retryBackoffMs(batch.attempts),
      error: err instanceof Error ? err.message : String(err),
    };
    await retryThroughOutage(() => rescheduleBatch(db, retry), ctx.settings.leaseMs);
    // A collection that failed part-way may have stored some results.
    return true;
  }
}

async function failAwaitingCargo(ctx: PipelineContext, batch: BatchRow, message: string): Promise<void> {
  const awaiting = await cargoAwaitingResults(ctx.database, batch.id);
  const moved = await storeResults(
    ctx.database,
    { batchId: batch.id, workerId: ctx.workerId },
    awaiting.map((c) => ({
      cargoId: c.id,
      success: false,
      response: null,
      errorMessage: message,
      resultTtlSeconds: c.resultTtlSeconds,
      isRecords: c.isRecords,
      nextStatus: statusAfterResult(false, c.channels.length),
      channels: c.channels,
    })),
    ctx.clock.now(),
  );
  countCargoMoves(ctx.metrics, batch, moved);
}
