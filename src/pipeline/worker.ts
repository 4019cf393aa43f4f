import { hostname } from 'node:os';
import type { DeliveryChannel } from '../delivery/channel.js';
import { Deliverer, type DelivererSettings } from '../delivery/deliverer.js';
import type { Mailer } from '../mail/mailer.js';
import { sendDueMail } from '../mail/outbox-sender.js';
import { claimDueBatches, nextBatchCheckAt, releaseLeases } from '../store/batches.js';
import { formDueBatches } from './batcher.js';
import type { PipelineContext } from './context.js';
import { checkBatch } from './poller.js';
import { purgeDueResults } from './purger.js';
import { submitBatch } from './submitter.js';

export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

interface StepOutcome {
  didWork: boolean;
  /** When the step should run again even if nothing wakes it. */
  nextAt: number | null;
}

/**
 * One loop per kind of work. A loop runs its step again at once while there is work, then sleeps
 * until its next due time, a wake-up (new cargo, a formed batch), or `idleMaxMs` as a safety net.
 * Errors are logged and retried with backoff; the loop itself never dies.
 */
class Loop {
  state: 'idle' | 'running' | 'sleeping' | 'stopped' = 'idle';
  lastError: unknown = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private done: Promise<void> | null = null;

  constructor(
    readonly name: string,
    private readonly step: () => Promise<StepOutcome>,
    private readonly ctx: PipelineContext,
    private readonly idleMaxMs: number,
  ) {}

  start(): void {
    this.done ??= this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    this.wake();
    await this.done;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.state !== 'stopped') {
      this.state = 'running';
      this.woken = false;
      let delay: number;
      try {
        const outcome = await this.step();
        failures = 0;
        this.lastError = null;
        if (outcome.didWork) continue;
        delay = outcome.nextAt === null ? this.idleMaxMs : outcome.nextAt - this.ctx.clock.now();
      } catch (err) {
        failures++;
        this.lastError = err;
        this.ctx.log.error({ loop: this.name, err }, 'pipeline step failed');
        delay = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
      }
      if (this.woken || (this.state as string) === 'stopped') continue;
      this.state = 'sleeping';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, Math.min(delay, this.idleMaxMs)));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }
}

export interface WorkerOptions {
  idleMaxMs: number;
  delivery: { channels: ReadonlyMap<string, DeliveryChannel>; settings: DelivererSettings; shutdownGraceMs: number };
  /** Sends the outbox's mail (incident mail). */
  mailer: Mailer;
}

/**
 * The worker side of one process: the batcher, the batch loop (submit and poll), the deliverer
 * and the purger. Every step claims its rows in the database, so any number of workers can run on
 * PostgreSQL.
 */
export class PipelineWorker {
  private readonly batcher: Loop;
  private readonly batches: Loop;
  private readonly deliveries: Loop;
  private readonly purger: Loop;
  private readonly outbox: Loop;
  private readonly deliverer: Deliverer;

  constructor(
    private readonly ctx: PipelineContext,
    private readonly options: WorkerOptions,
  ) {
    this.batcher = new Loop('batcher', () => this.formBatches(), ctx, options.idleMaxMs);
    this.batches = new Loop('batches', () => this.advanceBatches(), ctx, options.idleMaxMs);
    this.deliverer = new Deliverer({
      ...ctx,
      channels: options.delivery.channels,
      settings: options.delivery.settings,
      wake: () => this.deliveries.wake(),
      onMailQueued: () => this.outbox.wake(),
    });
    this.deliveries = new Loop('deliveries', () => this.deliverer.step(), ctx, options.idleMaxMs);
    this.purger = new Loop('purger', () => this.purge(), ctx, Math.max(options.idleMaxMs, 60_000));
    this.outbox = new Loop('outbox', () => this.sendMail(), ctx, options.idleMaxMs);
  }

  private get loops(): Loop[] {
    return [this.batcher, this.batches, this.deliveries, this.purger, this.outbox];
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  /** New cargo arrived. */
  wake(): void {
    this.batcher.wake();
  }

  /** Stops taking work, waits for in-flight steps and attempts, and gives up remaining leases. */
  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
    await this.deliverer.stop(this.options.delivery.shutdownGraceMs);
    await releaseLeases(this.ctx.database.write, this.ctx.workerId);
  }

  /** Runs every step until none has work left (tests drive the pipeline with this and a manual clock). */
  async runUntilIdle(): Promise<void> {
    for (;;) {
      const results = [await this.formBatches(), await this.advanceBatches()];
      results.push(await this.deliverer.step());
      await this.deliverer.drain();
      results.push(await this.purge(), await this.sendMail());
      if (!results.some((r) => r.didWork)) return;
    }
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
    await Promise.all([
      ...submitting.map((b) => submitBatch(this.ctx, b)),
      ...processing.map((b) => checkBatch(this.ctx, b)),
    ]);
    const didWork = submitting.length + processing.length > 0;
    if (processing.length > 0) this.deliveries.wake();
    return { didWork, nextAt: didWork ? null : await nextBatchCheckAt(database.read) };
  }

  private sendMail(): Promise<StepOutcome> {
    const { database, clock, workerId, log, settings } = this.ctx;
    return sendDueMail({ database, clock, workerId, log, leaseMs: settings.leaseMs, mailer: this.options.mailer });
  }

  private async purge(): Promise<StepOutcome> {
    const { purged, nextDueAt } = await purgeDueResults(this.ctx);
    return { didWork: purged > 0, nextAt: nextDueAt };
  }
}
