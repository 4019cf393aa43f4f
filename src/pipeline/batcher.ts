/** The batcher: pending cargo formed into batches per provider and model, once a group is full or has waited enough. */
import { newId } from '../domain/ids.js';
import type { Provider } from '../providers/provider.js';
import { formBatch } from '../store/batches/form.js';
import { pendingGroups } from '../store/batches/pending-groups.js';
import { countProviderBatches } from '../store/batches/provider-batches.js';
import { countCargoMoves, type PipelineContext } from './context.js';

export interface BatcherPass {
  formed: number;
  /** When the next partial group becomes due by time, if any. */
  nextDueAt: number | null;
  /** A provider had no room for a due group: the pass is worth running again when a batch step ends. */
  heldBack: boolean;
}

/**
 * Packs pending cargo into batches: a group of one (provider, model) is flushed when it fills a
 * batch (the provider's request or byte limit, or BARGE_BATCH_MAX_SIZE), or when its oldest cargo
 * has waited the group's max wait.
 *
 * One pass forms at most one batch per group. When it formed any, it asks to run again at once
 * (`nextDueAt` = now) rather than looping here: SQLite queries are synchronous, so a backlog of a
 * million pending cargo would otherwise keep the event loop from HTTP requests, timers and the
 * submitter for as long as it takes to form a hundred batches, and no batch would be submitted
 * before the last was formed.
 */
export async function formDueBatches(ctx: PipelineContext): Promise<BatcherPass> {
  const now = ctx.clock.now();
  let nextDueAt: number | null = null;
  let formed = 0;
  let heldBack = false;
  const room = new Map<string, boolean>();
  for (const group of await pendingGroups(ctx.database)) {
    const provider = ctx.providers.get(group.provider);
    if (!provider) {
      ctx.log.warn({ provider: group.provider }, 'pending cargo for a provider that is not configured');
      continue;
    }
    if (!room.has(provider.name)) room.set(provider.name, await hasRoom(ctx, provider));
    if (!room.get(provider.name)) {
      heldBack = true;
      continue;
    }
    const maxWait = ctx.settings.batchMaxWaitMs ?? provider.limits.defaultMaxWaitMs;
    const dueAt = group.oldestAt + maxWait;
    const batch = await formBatch(ctx.database, {
      batchId: newId('bat', now),
      provider: group.provider,
      providerModel: group.providerModel,
      maxRequests: Math.min(provider.limits.maxRequests, ctx.settings.batchMaxSize),
      maxBytes: provider.limits.maxBytes,
      onlyIfFull: dueAt > now,
      now,
    });
    if (batch) {
      formed++;
      ctx.metrics.count('barge_batches_formed_total', { provider: group.provider, model: group.providerModel });
      countCargoMoves(
        ctx.metrics,
        { provider: group.provider, provider_model: group.providerModel },
        new Map([['batched', batch.cargoCount]]),
      );
      ctx.log.info({ batch: batch.batchId, cargo: batch.cargoCount, requests: batch.requestCount }, 'batch formed');
    } else if (nextDueAt === null || dueAt < nextDueAt) {
      nextDueAt = dueAt;
    }
  }
  // More may be due at once: the group may hold another full batch.
  return { formed, nextDueAt: formed > 0 ? now : nextDueAt, heldBack };
}

/**
 * Whether another batch of the provider may be formed now: not while one of its batches waits to
 * try again (rate limited, refused or unanswered), nor past its free job slots (maxJobsInProgress,
 * counting the batches that wait to be accepted). A batch formed ahead of what the provider can
 * take would hold its cargo, in the order they came, ahead of what other projects send meanwhile;
 * left pending, they are taken round robin into the next batch the provider can start.
 */
async function hasRoom(ctx: PipelineContext, provider: Provider): Promise<boolean> {
  const counts = await countProviderBatches(ctx.database, provider.name);
  if (counts.retrying > 0) return false;
  const limit = provider.limits.maxJobsInProgress;
  return limit === undefined || counts.processing + counts.submitting < limit;
}
