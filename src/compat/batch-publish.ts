/**
 * Creating a committed batch's cargo: a bounded chunk per transaction (store/compat/create.ts),
 * with a turn of the event loop between chunks, then the batch opens. The creator runs it after
 * beginning the publish; the sweeper runs it for a batch whose creator died between chunks, under
 * a lease it took over. A chunk moves its rows out of the staging, so whoever goes on starts where
 * the last one stopped.
 */

import { LIMITS } from '../domain/cargo-request.js';
import type { Clock } from '../domain/clock.js';
import { openCompatBatch, publishCompatChunk } from '../store/compat/create.js';
import type { Database } from '../store/database.js';
import { nextTurn } from '../turns.js';

export interface PublishDeps {
  database: Database;
  clock: Clock;
  leaseMs: number;
  /** The most one transaction moves (tests make it small). */
  chunk?: { rows: number; bytes: number };
}

/** Creates every cargo still staged for the batch, then opens it; throws CompatLeaseLost when the lease is another's. */
export async function publishStaged(deps: PublishDeps, batchId: string, lockedBy: string): Promise<void> {
  for (;;) {
    const now = deps.clock.now();
    const moved = await publishCompatChunk(deps.database, {
      batchId,
      lockedBy,
      lockedUntil: now + deps.leaseMs,
      now,
      resultTtlSeconds: LIMITS.defaultTtlSeconds,
      ...(deps.chunk ? { chunk: deps.chunk } : {}),
    });
    if (moved === 0) break;
    await nextTurn();
  }
  await openCompatBatch(deps.database, { batchId, lockedBy, now: deps.clock.now() });
}
