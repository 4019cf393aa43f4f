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
 * storage budget does) and adds what it reserved itself meanwhile. So a project without a budget
 * costs nothing, one with a budget costs no query on most requests, and with several API processes
 * a project can overshoot a budget by at most what the other processes accepted for it within
 * `checkMs`, plus the requests in flight at that moment.
 */
export class SpendBudget {
  private readonly spend = new Map<string, { spend: Spend; readAt: number }>();
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

  /** Throws the 402 when reserving `estimate` (nano-USD) more would pass one of `budgets`. */
  async check(projectId: string, budgets: Budgets, estimate: number): Promise<void> {
    const spend = await this.current(projectId);
    const passed = budgetPassed(budgets, spend, estimate);
    if (passed) {
      throw errors.budgetExceeded({
        period: passed.period,
        budgetUsd: nanoToUsd(passed.budget),
        spentUsd: nanoToUsd(passed.spent),
        reservedUsd: nanoToUsd(passed.reserved),
      });
    }
  }

  /** What this process just committed counts at once, before its next read of the counters. */
  accepted(projectId: string, estimate: number): void {
    const entry = this.spend.get(projectId);
    if (entry) entry.spend = { ...entry.spend, reserved: entry.spend.reserved + estimate };
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
