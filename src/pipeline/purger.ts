/**
 * The purger: results past their retention deleted, a chunk per transaction, Idempotency-Keys past
 * 24 hours, and the sweep of the provider-compatible endpoints (compat/sweeper.ts).
 */
import { sweepCompat } from '../compat/sweeper.js';
import { purgeIdempotencyKeys } from '../store/idempotency-keys.js';
import { nextResultExpiry, purgeExpiredResults } from '../store/results/purge.js';
import type { PipelineContext } from './context.js';

/** Purges every result past its retention, a chunk per transaction, a chunk of old keys, and sweeps; returns when the next is due. */
export async function purgeDueResults(
  ctx: PipelineContext,
): Promise<{ purged: number; keys: number; swept: number; nextDueAt: number | null }> {
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
  const sweep = await sweepCompat({ database: ctx.database, clock: ctx.clock, leaseMs: ctx.settings.leaseMs });
  if (sweep.swept > 0) ctx.log.info({ swept: sweep.swept }, 'provider-compatible batches and files swept');
  const due = [await nextResultExpiry(ctx.database), sweep.nextDueAt].filter((at): at is number => at !== null);
  return { purged, keys, swept: sweep.swept, nextDueAt: due.length > 0 ? Math.min(...due) : null };
}
