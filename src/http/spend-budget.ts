/** The per-project spend budget checked at submit: estimates reserved, results' cost spent, per month and day. */

import { rememberBounded } from '../bounded-map.js';
import type { Clock } from '../domain/clock.js';
import { errors } from '../domain/errors.js';
import { type Budgets, budgetPassed, budgetsOf, nanoToUsd, periodStarts, type Spend } from '../domain/spend.js';
import type { Database } from '../store/database.js';
import { readSpend } from '../store/spend-usage.js';
import type { AuthContext } from './auth.js';

/** A checked estimate of one submit (nano-USD). */
export interface Reservation {
  projectId: string;
  estimate: number;
  /** The commit's number once the insert committed; null while it runs. */
  committed: number | null;
}

/**
 * A project's spend budgets at submit (decisions.md, "Model policy and spend budgets"). The
 * counters live in the database (store/spend-usage.ts, moved in the insert's transaction); this
 * process reads a project's counters at most every `checkMs` (BARGE_STORAGE_CHECK_MS, as the
 * storage budget does) and adds what it reserved itself: a check that passes counts its estimate
 * at once, before the insert (and gives it back if the insert fails), and keeps counting it until
 * a read begun after its commit holds it; so requests to one process never pass a budget, however
 * many at once. A project without a budget costs nothing, one with a budget costs no query on
 * most requests, and with several API processes a project can overshoot a budget by at most what
 * the other processes accepted for it between one read's snapshot and `checkMs` after that read
 * returned, their inserts in flight at the snapshot included (test/http/spend-overshoot.test.ts).
 */
export class SpendBudget {
  private readonly spend = new Map<string, { spend: Spend; readAt: number }>();
  /**
   * What this process reserved that its last read of a project's counters may not hold: checks
   * whose insert has not ended (`committed` null), and inserts committed after that read began.
   */
  private readonly unread = new Map<string, Reservation[]>();
  /** Counts commits, so a read knows which ones it holds: those before it began. */
  private commits = 0;
  private readonly reads = new Map<string, Promise<Spend>>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly options: { defaultMonthlyUsd: number | null; checkMs: number; maxProjects?: number },
  ) {}

  /** The budgets that apply to the caller's project (nano-USD). */
  budgetsOf(auth: AuthContext): Budgets {
    return budgetsOf(auth.spend, this.options.defaultMonthlyUsd);
  }

  /**
   * Throws the 402 when reserving `estimate` (nano-USD) more would pass one of `budgets`; else
   * counts it until `settle` says how its insert ended. Nothing awaits between the comparison and
   * the count, so concurrent requests never pass a budget together.
   */
  async check(projectId: string, budgets: Budgets, estimate: number): Promise<Reservation> {
    const read = await this.current(projectId);
    const unread = this.unread.get(projectId) ?? [];
    const reserved = unread.reduce((sum, r) => sum + r.estimate, read.reserved);
    const passed = budgetPassed(budgets, { ...read, reserved }, estimate);
    if (passed) {
      throw errors.budgetExceeded({
        period: passed.period,
        budgetUsd: nanoToUsd(passed.budget),
        spentUsd: nanoToUsd(passed.spent),
        reservedUsd: nanoToUsd(passed.reserved),
      });
    }
    const reservation: Reservation = { projectId, estimate, committed: null };
    unread.push(reservation);
    this.unread.set(projectId, unread);
    return reservation;
  }

  /** The insert of a checked reservation ended: committed, it counts until a read begun after it holds it. */
  settle(reservation: Reservation, committed: boolean): void {
    if (committed) reservation.committed = ++this.commits;
    else this.forget(reservation.projectId, (r) => r === reservation);
  }

  private forget(projectId: string, gone: (r: Reservation) => boolean): void {
    const left = (this.unread.get(projectId) ?? []).filter((r) => !gone(r));
    if (left.length > 0) this.unread.set(projectId, left);
    else this.unread.delete(projectId);
  }

  private async current(projectId: string): Promise<Spend> {
    const now = this.clock.now();
    const entry = this.spend.get(projectId);
    // A period that ended since the read starts from what the database says of the new one.
    if (
      entry &&
      performance.now() - entry.readAt < this.options.checkMs &&
      entry.spend.dayStart === periodStarts(now).day
    ) {
      return entry.spend;
    }
    // Concurrent requests of one project share one read.
    let read = this.reads.get(projectId);
    if (!read) {
      const before = this.commits;
      read = readSpend(this.database, projectId, now)
        .then((spend) => {
          // What was committed before the read began is in what it read: both change together.
          this.forget(projectId, (r) => r.committed !== null && r.committed <= before);
          rememberBounded(
            this.spend,
            projectId,
            { spend, readAt: performance.now() },
            this.options.maxProjects ?? 10_000,
          );
          return spend;
        })
        .finally(() => this.reads.delete(projectId));
      this.reads.set(projectId, read);
    }
    return read;
  }
}
