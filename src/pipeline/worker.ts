/** The pipeline worker: the batcher, the batch loop (submit and poll) and the purger. */
import { hostname } from 'node:os';
import { Loop, type StepOutcome } from '../loop.js';
import { claimDueBatches, nextBatchCheckAt } from '../store/batches/due.js';
import { releaseLeases } from '../store/leases.js';
import { formDueBatches } from './batcher.js';
import type { PipelineContext } from './context.js';
import { checkBatch } from './poller.js';
import { purgeDueResults } from './purger.js';
import { submitBatch } from './submitter.js';

export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

export interface PipelineWorkerOptions {
  idleMaxMs: number;
  /** Results were stored (deliveries may be due): the delivery worker wakes. */
  onResultsStored: () => void;
}

/**
 * The batch side of a worker process: the batcher, the batch loop (submit and poll) and the
 * purger. Every step claims its rows in the database, so any number of workers can run on
 * PostgreSQL. Deliveries are the delivery worker's (src/delivery/worker.ts), composed beside it.
 */
export class PipelineWorker {
  private readonly batcher: Loop;
  private readonly batches: Loop;
  private readonly purger: Loop;

  constructor(
    private readonly ctx: PipelineContext,
    private readonly options: PipelineWorkerOptions,
  ) {
    const loop = { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics, idleMaxMs: options.idleMaxMs };
    this.batcher = new Loop('batcher', () => this.formBatches(), loop);
    this.batches = new Loop('batches', () => this.advanceBatches(), loop);
    this.purger = new Loop('purger', () => this.purge(), { ...loop, idleMaxMs: Math.max(options.idleMaxMs, 60_000) });
  }

  get loops(): Loop[] {
    return [this.batcher, this.batches, this.purger];
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  /** New cargo arrived. */
  wake(): void {
    this.batcher.wake();
  }

  /** Stops taking work, waits for in-flight steps, and gives up remaining leases. */
  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
    await releaseLeases(this.ctx.database, 'batches', this.ctx.workerId);
  }

  /** One pass of every step; whether any did work (tests drive the pipeline with this). */
  async runOnce(): Promise<boolean> {
    const results = [await this.formBatches(), await this.advanceBatches(), await this.purge()];
    return results.some((r) => r.didWork);
  }

  private async formBatches(): Promise<StepOutcome> {
    const pass = await formDueBatches(this.ctx);
    if (pass.formed > 0) this.batches.wake();
    return { didWork: false, nextAt: pass.nextDueAt };
  }

  private async advanceBatches(): Promise<StepOutcome> {
    const { database, clock, settings, workerId } = this.ctx;
    const claim = (status: 'submitting' | 'processing') =>
      claimDueBatches(database, {
        status,
        workerId,
        now: clock.now(),
        leaseMs: settings.leaseMs,
        limit: settings.concurrency,
      });
    const submitting = await claim('submitting');
    const processing = await claim('processing');
    const [, checked] = await Promise.all([
      Promise.all(submitting.map((b) => submitBatch(this.ctx, b))),
      Promise.all(processing.map((b) => checkBatch(this.ctx, b))),
    ]);
    const didWork = submitting.length + processing.length > 0;
    // Only a batch whose results were (or may have been) stored makes deliveries due; a poll of a
    // running job does not, and must not cost a NOTIFY to every delivery worker.
    if (checked.some(Boolean)) this.options.onResultsStored();
    return { didWork, nextAt: didWork ? null : await nextBatchCheckAt(database) };
  }

  private async purge(): Promise<StepOutcome> {
    const { purged, nextDueAt } = await purgeDueResults(this.ctx);
    return { didWork: purged > 0, nextAt: nextDueAt };
  }
}
