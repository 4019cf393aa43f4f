/** The pipeline worker: the batcher, the batch loop (submit and poll) and the purger. */
import { hostname } from 'node:os';
import { Loop, type StepOutcome } from '../loop.js';
import { nextBatchCheckAt } from '../store/batches/due.js';
import { releaseLeases } from '../store/leases.js';
import { BatchSteps } from './batch-steps.js';
import { formDueBatches } from './batcher.js';
import type { PipelineContext } from './context.js';
import { purgeDueResults } from './purger.js';

export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

export interface PipelineWorkerOptions {
  idleMaxMs: number;
  /** How long stop() waits for batch steps in flight before giving their leases back. */
  shutdownGraceMs: number;
  /** Results were stored (deliveries may be due): the delivery worker wakes. */
  onResultsStored: () => void;
  /** Loops beside the batch steps that a provider runs in the worker (the real-time endpoint runner). */
  providerLoops?: ProviderLoops;
}

/** Work a provider does in the worker itself (openai-compatible's runner): its loops, run and stopped with the rest. */
export interface ProviderLoops {
  readonly loops: Loop[];
  runOnce(): Promise<boolean>;
  stop(graceMs: number): Promise<void>;
}

/** How often due batches are looked for while a provider's slots are all taken. */
const FULL_PROVIDER_RECHECK_MS = 1000;

/**
 * The batch side of a worker process: the batcher, the batch loop (submit and poll) and the
 * purger. Every step claims its rows in the database, so any number of workers can run on
 * PostgreSQL. Deliveries are the delivery worker's (src/delivery/worker.ts), composed beside it.
 */
export class PipelineWorker {
  private readonly batcher: Loop;
  private readonly batches: Loop;
  private readonly purger: Loop;
  private readonly steps: BatchSteps;
  /** The last batcher pass left a group for lack of room at its provider. */
  private heldBack = false;

  constructor(
    private readonly ctx: PipelineContext,
    private readonly options: PipelineWorkerOptions,
  ) {
    const loop = { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics, idleMaxMs: options.idleMaxMs };
    this.steps = new BatchSteps(ctx, {
      onStepDone: (storedResults) => {
        // Only a batch whose results were (or may have been) stored makes deliveries due; a poll
        // of a running job does not, and must not cost a NOTIFY to every delivery worker.
        if (storedResults) options.onResultsStored();
        this.batches.wake();
        // A job accepted or ended, or a retry done, may give a provider room for what it held back.
        if (this.heldBack) this.batcher.wake();
      },
    });
    this.batcher = new Loop('batcher', () => this.formBatches(), loop);
    this.batches = new Loop('batches', () => this.advanceBatches(), loop);
    this.purger = new Loop('purger', () => this.purge(), { ...loop, idleMaxMs: Math.max(options.idleMaxMs, 60_000) });
  }

  get loops(): Loop[] {
    return [this.batcher, this.batches, this.purger, ...(this.options.providerLoops?.loops ?? [])];
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  /** New cargo arrived. */
  wake(): void {
    this.batcher.wake();
  }

  /** Stops taking work, waits (bounded) for in-flight steps, and gives up remaining leases. */
  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
    await this.options.providerLoops?.stop(this.options.shutdownGraceMs);
    await this.steps.stop(this.options.shutdownGraceMs);
    await releaseLeases(this.ctx.database, 'batches', this.ctx.workerId);
  }

  /**
   * One pass of every step, the batch steps it started run to their end; whether any did work
   * (tests drive the pipeline with this).
   */
  async runOnce(): Promise<boolean> {
    const formed = await this.formBatches();
    const advanced = await this.advanceBatches();
    await this.steps.drain();
    const sent = (await this.options.providerLoops?.runOnce()) ?? false;
    const purged = await this.purge();
    return sent || [formed, advanced, purged].some((r) => r.didWork);
  }

  private async formBatches(): Promise<StepOutcome> {
    const pass = await formDueBatches(this.ctx);
    this.heldBack = pass.heldBack;
    if (pass.formed > 0) this.batches.wake();
    return { didWork: false, nextAt: pass.nextDueAt };
  }

  /**
   * Starts the steps of due batches in free slots; the steps run on their own and wake this loop
   * as they end. With nothing to start, it sleeps until the next batch is due, or, while a
   * provider's slots are all taken and its due batches wait, a second at most.
   */
  private async advanceBatches(): Promise<StepOutcome> {
    const started = await this.steps.startDue();
    if (started > 0) return { didWork: true, nextAt: null };
    const nextAt = await nextBatchCheckAt(this.ctx.database);
    const now = this.ctx.clock.now();
    if (nextAt !== null && nextAt <= now) {
      // Due, but nothing could be started: a step's end wakes the loop when every slot is taken;
      // when only a provider's are, the others' batches that fall due are looked for meanwhile.
      const processFull = this.steps.inFlight >= this.ctx.settings.concurrency;
      return { didWork: false, nextAt: processFull ? null : now + FULL_PROVIDER_RECHECK_MS };
    }
    return { didWork: false, nextAt };
  }

  private async purge(): Promise<StepOutcome> {
    const { purged, keys, swept, nextDueAt } = await purgeDueResults(this.ctx);
    return { didWork: purged > 0 || keys > 0 || swept > 0, nextAt: nextDueAt };
  }
}
