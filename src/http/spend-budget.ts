/** The per-project spend budget checked at submit: estimates reserved, results' cost spent, per month and day. */

import { rememberBounded } from '../bounded-map.js';
import type { Clock } from '../domain/clock.js';
import { errors } from '../domain/errors.js';
import { type Budgets, budgetPassed, budgetsOf, nanoToUsd, periodStarts, type Spend } from '../domain/spend.js';
import type { Database } from '../store/database.js';
import { readSpend } from '../store/spend-usage.js';
import type { AuthContext } from './auth.js';

/**
 * A project's spend budgets at submit (decisions.md, "Model policy and spend budgets"). The
 * counters live in the database (store/spend-usage.ts, moved in the insert's transaction); this
 * process reads a project's counters at most every `checkMs` (BARGE_STORAGE_CHECK_MS, as the
 * storage budget does) and adds what it reserved itself: a check that passes counts its estimate
 * at once, before the insert (and gives it back if the insert fails), so concurrent requests to
 * one process never pass a budget together. So a project without a budget costs nothing, one with
 * a budget costs no query on most requests, and with several API processes a project can
 * overshoot a budget by at most what the other processes accepted for it between one read's
 * snapshot and `checkMs` after that read returned, their inserts in flight at the snapshot
 * included (test/http/spend-overshoot.test.ts). One gap: an insert that commits after a read's
 * snapshot and settles before the read returns is counted in neither, so this process misses it
 * until its next read.
 */
export class SpendBudget {
  private readonly spend = new Map<string, { spend: Spend; readAt: number }>();
  /** Estimates whose check passed and whose insert has not ended yet, by project. */
  private readonly inFlight = new Map<string, number>();
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
   * counts it as in flight until `settle`. Nothing awaits between the comparison and the count.
   */
  async check(projectId: string, budgets: Budgets, estimate: number): Promise<void> {
    const read = await this.current(projectId);
    const inFlight = this.inFlight.get(projectId) ?? 0;
    const spend = { ...read, reserved: read.reserved + inFlight };
    const passed = budgetPassed(budgets, spend, estimate);
    if (passed) {
      throw errors.budgetExceeded({
        period: passed.period,
        budgetUsd: nanoToUsd(passed.budget),
        spentUsd: nanoToUsd(passed.spent),
        reservedUsd: nanoToUsd(passed.reserved),
      });
    }
    this.inFlight.set(projectId, inFlight + estimate);
  }

  /** The insert of a checked estimate ended: committed, it counts until the next read of the counters. */
  settle(projectId: string, estimate: number, committed: boolean): void {
    const left = (this.inFlight.get(projectId) ?? 0) - estimate;
    if (left > 0) this.inFlight.set(projectId, left);
    else this.inFlight.delete(projectId);
    const entry = this.spend.get(projectId);
    if (committed && entry) entry.spend = { ...entry.spend, reserved: entry.spend.reserved + estimate };
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
      read = readSpend(this.database, projectId, now).finally(() => this.reads.delete(projectId));
      this.reads.set(projectId, read);
    }
    const spend = await read;
    rememberBounded(this.spend, projectId, { spend, readAt: performance.now() }, this.options.maxProjects ?? 10_000);
    return spend;
  }
}
