/** The purger: results past their retention deleted, a chunk per transaction, and Idempotency-Keys past 24 hours. */
import { purgeIdempotencyKeys } from '../store/idempotency-keys.js';
import { nextResultExpiry, purgeExpiredResults } from '../store/results/purge.js';
import type { PipelineContext } from './context.js';

/** Purges every result past its retention, a chunk per transaction, and a chunk of old keys; returns when the next result is due. */
export async function purgeDueResults(
  ctx: PipelineContext,
): Promise<{ purged: number; keys: number; nextDueAt: number | null }> {
  let purged = 0;
  for (;;) {
    const n = await purgeExpiredResults(ctx.database, ctx.clock.now(), ctx.settings.purgeChunk);
    purged += n;
    if (n < ctx.settings.purgeChunk) break;
  }
  if (purged > 0) ctx.log.info({ purged }, 'expired results purged');
  // Keys are looked up by their age too (findIdempotentCargo): this only keeps the table small,
  // so it runs on the results' schedule (at least every idle interval), a chunk a turn.
  const keys = await purgeIdempotencyKeys(ctx.database, ctx.clock.now(), ctx.settings.purgeChunk);
  if (keys > 0) ctx.log.info({ keys }, 'idempotency keys older than 24 hours purged');
  return { purged, keys, nextDueAt: await nextResultExpiry(ctx.database) };
}
