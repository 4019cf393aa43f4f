/**
 * The batch steps in flight in one process: each claimed batch's step (submit, or poll and collect)
 * runs on its own, so a provider call that hangs holds only its own batch.
 */
import { type BatchRow, claimDueBatches } from '../store/batches/due.js';
import { extendLease } from '../store/leases.js';
import { isDatabaseUnavailable } from '../store/outage.js';
import type { PipelineContext } from './context.js';
import { checkBatch } from './poller.js';
import { submitBatch } from './submitter.js';

export interface BatchStepsOptions {
  /** A step ended: its slot is free, and results may have been stored (`storedResults`). */
  onStepDone: (storedResults: boolean) => void;
}

/**
 * Starts the steps of due batches in free slots and lets each run to its end apart from the
 * others. The slots are bounded twice: `concurrency` for the process (BARGE_WORKER_CONCURRENCY)
 * and `providerConcurrency` for each provider (BARGE_PROVIDER_CONCURRENCY), so a burst of batches
 * opens a bounded number of connections, and a provider whose calls all hang holds its own slots
 * and no other provider's. While a step runs, its lease is renewed (every third of BARGE_LEASE_MS):
 * a step slow at its provider keeps its batch, and a killed worker's batch is taken over once its
 * lease lapses.
 */
export class BatchSteps {
  private readonly running = new Map<string, { provider: string; done: Promise<void>; renewal: NodeJS.Timeout }>();

  constructor(
    private readonly ctx: PipelineContext,
    private readonly options: BatchStepsOptions,
  ) {}

  get inFlight(): number {
    return this.running.size;
  }

  /** Claims due batches into the free slots and starts their steps; how many it started. */
  async startDue(): Promise<number> {
    const { settings } = this.ctx;
    let free = settings.concurrency - this.running.size;
    if (free <= 0) return 0;
    const full = this.providersAtCapacity();
    const claim = async (status: 'submitting' | 'processing', limit: number) =>
      limit <= 0
        ? []
        : claimDueBatches(this.ctx.database, {
            status,
            workerId: this.ctx.workerId,
            now: this.ctx.clock.now(),
            leaseMs: settings.leaseMs,
            limit,
            providersNot: full,
          });
    // Half the free slots for each status first, so a wave of new batches does not keep the
    // running ones from being polled (nor the other way round); what one leaves, the other takes.
    const half = Math.ceil(free / 2);
    const submitting: BatchRow[] = await claim('submitting', half);
    free -= submitting.length;
    const processing = await claim('processing', free);
    free -= processing.length;
    if (free > 0 && submitting.length === half) submitting.push(...(await claim('submitting', free)));
    // A claim may bring more of a provider than its free slots (it is one query for all
    // providers): the extra are started all the same, as their leases are held; the next claim
    // leaves that provider out until it is below its bound again.
    for (const batch of submitting) this.start(batch, () => submitBatch(this.ctx, batch).then(() => false));
    for (const batch of processing) this.start(batch, () => checkBatch(this.ctx, batch));
    return submitting.length + processing.length;
  }

  /** Waits for every step in flight to end. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /**
   * Waits for the steps in flight, at most `graceMs` (a call may be slow at its provider for up to
   * the call deadline): the leases of those still running are then given back with the rest, and
   * another worker takes their batches over as after a crash (an open create is looked for first).
   */
  async stop(graceMs: number): Promise<void> {
    await Promise.race([this.drain(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    for (const { renewal } of this.running.values()) clearInterval(renewal);
  }

  private providersAtCapacity(): string[] {
    const counts = new Map<string, number>();
    for (const { provider } of this.running.values()) counts.set(provider, (counts.get(provider) ?? 0) + 1);
    return [...counts].filter(([, n]) => n >= this.ctx.settings.providerConcurrency).map(([provider]) => provider);
  }

  private start(batch: BatchRow, step: () => Promise<boolean>): void {
    const renewal = this.renewLease(batch.id);
    const done = step()
      .catch((err: unknown) => {
        // The steps record their own failures; what escapes is a store failure, retried once the
        // lease lapses. A database outage is reported once by the store, not by every step.
        if (!isDatabaseUnavailable(err)) this.ctx.log.error({ batch: batch.id, err }, 'batch step failed');
        return true;
      })
      .then((storedResults) => {
        clearInterval(renewal);
        this.running.delete(batch.id);
        this.options.onStepDone(storedResults);
      });
    this.running.set(batch.id, { provider: batch.provider, done, renewal });
  }

  private renewLease(batchId: string): NodeJS.Timeout {
    const { database, clock, settings, workerId, log } = this.ctx;
    const timer = setInterval(() => {
      extendLease(database, 'batches', { id: batchId, workerId, until: clock.now() + settings.leaseMs }).catch(
        (err: unknown) => {
          if (!isDatabaseUnavailable(err)) log.warn({ batch: batchId, err }, 'could not renew a batch lease');
        },
      );
    }, settings.leaseMs / 3);
    timer.unref();
    return timer;
  }
}
