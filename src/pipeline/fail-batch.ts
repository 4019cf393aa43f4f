/** Giving a batch up: every cargo still waiting on it fails with one message, and the batch ends. */
import { NO_TOKENS, usageOf } from '../domain/usage.js';
import type { BatchRow } from '../store/batches/due.js';
import { markBatchEnded } from '../store/batches/reschedule.js';
import { cargoAwaitingResults } from '../store/results/awaiting.js';
import { storeResults } from '../store/results/store.js';
import { cargoPrices, newResult } from './collector.js';
import { countCargoMoves, type PipelineContext } from './context.js';

export async function failBatch(ctx: PipelineContext, batch: BatchRow, message: string): Promise<void> {
  const awaiting = await cargoAwaitingResults(ctx.database, batch.id);
  const prices = cargoPrices(ctx, batch);
  const moved = await storeResults(
    ctx.database,
    { batchId: batch.id, workerId: ctx.workerId },
    // A request that never ran used nothing.
    awaiting.map((c) => newResult(c, false, null, message, usageOf(prices(c), NO_TOKENS))),
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
