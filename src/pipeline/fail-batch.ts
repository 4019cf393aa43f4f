/** Giving a batch up: every cargo still waiting on it fails with one message, and the batch ends. */
import { statusAfterResult } from '../domain/lifecycle.js';
import type { BatchRow } from '../store/batches/due.js';
import { markBatchEnded } from '../store/batches/reschedule.js';
import { cargoAwaitingResults } from '../store/results/awaiting.js';
import { storeResults } from '../store/results/store.js';
import { countCargoMoves, type PipelineContext } from './context.js';

export async function failBatch(ctx: PipelineContext, batch: BatchRow, message: string): Promise<void> {
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
  await markBatchEnded(ctx.database, {
    batchId: batch.id,
    workerId: ctx.workerId,
    reason: 'failed',
    now: ctx.clock.now(),
  });
  ctx.log.error({ batch: batch.id, provider: batch.provider, error: message }, 'batch failed');
}
