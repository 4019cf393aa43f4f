/** The purger: results past their retention deleted, a chunk per transaction. */
import { nextResultExpiry, purgeExpiredResults } from '../store/results/purge.js';
import type { PipelineContext } from './context.js';

/** Purges every result past its retention, a chunk per transaction; returns when the next is due. */
export async function purgeDueResults(ctx: PipelineContext): Promise<{ purged: number; nextDueAt: number | null }> {
  let purged = 0;
  for (;;) {
    const n = await purgeExpiredResults(ctx.database, ctx.clock.now(), ctx.settings.purgeChunk);
    purged += n;
    if (n < ctx.settings.purgeChunk) break;
  }
  if (purged > 0) ctx.log.info({ purged }, 'expired results purged');
  return { purged, nextDueAt: await nextResultExpiry(ctx.database) };
}
