/** The delivery worker: the deliverer's loop, the outbox sender's, the budget watch and bulk recoveries, side by side. */
import { Loop } from '../loop.js';
import type { Mailer } from '../mail/mailer.js';
import { sendDueMail } from '../mail/outbox-sender.js';
import { sendBudgetAlerts } from '../operations/budget-alerts.js';
import { workRecovery } from '../operations/work-recovery.js';
import { releaseRecoveries } from '../store/recoveries/work.js';
import { Deliverer, type DelivererDeps } from './deliverer.js';

/** The deliverer's own, less the wake-ups the worker wires between its loops, and the outbox's. */
export interface DeliveryWorkerDeps extends Omit<DelivererDeps, 'wake' | 'onMailQueued'> {
  /** Sends the outbox's mail (incident mail). */
  mailer: Mailer;
  /** How long a claimed outbox message or bulk recovery is this worker's (BARGE_LEASE_MS). */
  leaseMs: number;
  idleMaxMs: number;
  /** How long stop() waits for attempts in flight before giving their leases back. */
  shutdownGraceMs: number;
  /** BARGE_DEFAULT_MONTHLY_BUDGET_USD, for the budget watch. */
  defaultMonthlyBudgetUsd: number | null;
}

/** How often the budget watch reads the budgeted projects' spend (its alerts lag by at most this). */
const BUDGET_WATCH_MS = 10_000;

/**
 * The delivery side of a worker process: the attempt scheduler's loop, the outbox sender, the
 * budget watch, and bulk recoveries (which schedule redeliveries in chunks). Composed beside the
 * pipeline worker (src/service.ts), which wakes it when results are stored; a redelivery or a
 * recovery made elsewhere wakes it the same way.
 */
export class DeliveryWorker {
  private readonly deliverer: Deliverer;
  private readonly deliveries: Loop;
  private readonly outbox: Loop;
  private readonly budgets: Loop;
  private readonly recoveries: Loop;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    const loop = { clock: deps.clock, log: deps.log, metrics: deps.metrics, idleMaxMs: deps.idleMaxMs };
    this.deliverer = new Deliverer({
      ...deps,
      wake: () => this.deliveries.wake(),
      onMailQueued: () => this.outbox.wake(),
    });
    this.deliveries = new Loop('deliveries', () => this.deliverer.step(), loop);
    this.outbox = new Loop('outbox', () => this.sendMail(), loop);
    this.budgets = new Loop('budget-alerts', () => this.watchBudgets(), loop);
    this.recoveries = new Loop('recoveries', () => this.recover(), loop);
  }

  get loops(): Loop[] {
    return [this.deliveries, this.outbox, this.budgets, this.recoveries];
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  /** Results were stored, a redelivery or a recovery made, here or in another process: deliveries may be due. */
  wake(): void {
    this.deliveries.wake();
    this.recoveries.wake();
  }

  /** Stops taking work, waits (bounded) for attempts in flight, and gives up remaining leases. */
  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
    await this.deliverer.stop(this.deps.shutdownGraceMs);
    // A recovery given back is taken over by another worker at once (its progress is committed).
    await releaseRecoveries(this.deps.database, this.deps.workerId);
  }

  /** One pass: a recovery's turn, then starts due attempts, waits for them to be recorded, checks budgets, sends due mail. */
  async runOnce(): Promise<boolean> {
    const recovered = await this.recover();
    const step = await this.deliverer.step();
    await this.deliverer.drain();
    const alerts = await this.watchBudgets();
    const mail = await this.sendMail();
    return recovered.didWork || step.didWork || alerts.didWork || mail.didWork;
  }

  /** A turn on the bulk recovery due first (operations/work-recovery.ts); wakes the deliveries it scheduled. */
  private async recover() {
    const { database, clock, workerId, leaseMs } = this.deps;
    const turn = await workRecovery({ database, clock }, { workerId, leaseMs });
    if (turn.redelivered > 0) this.deliveries.wake();
    if (turn.recoveryId !== null) return { didWork: true, nextAt: clock.now() };
    // Another worker's lease on a running recovery lapses then, if it died.
    return { didWork: false, nextAt: turn.nextAt };
  }

  /** Budget alerts into the outbox (operations/budget-alerts.ts); wakes the sender when it queued one. */
  private async watchBudgets() {
    const { database, clock, defaultMonthlyBudgetUsd } = this.deps;
    const recorded = await sendBudgetAlerts({ database, clock, defaultMonthlyBudgetUsd });
    if (recorded > 0) this.outbox.wake();
    return { didWork: recorded > 0, nextAt: clock.now() + BUDGET_WATCH_MS };
  }

  private sendMail() {
    const { database, clock, workerId, log, mailer, leaseMs } = this.deps;
    return sendDueMail({ database, clock, workerId, log, mailer, leaseMs });
  }
}
