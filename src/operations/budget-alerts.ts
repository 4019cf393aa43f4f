/**
 * The budget watch (decisions.md, "Model policy and spend budgets"): each project's spend against
 * its budgets, and an alert mail through the outbox when its spend passes 50 %, 80 % or 100 % of a
 * budget, once per threshold and period (store/budget-alerts.ts). Run by the delivery worker every
 * few seconds, and read by the `barge_project_budget_ratio` gauge at scrape time.
 */
import { isoTime } from '../domain/clock.js';
import { ALERT_THRESHOLDS, type BudgetPeriod, budgetsOf, nanoToUsd } from '../domain/spend.js';
import type { MailMessage } from '../mail/mailer.js';
import { listBudgetedProjects, recordBudgetAlerts } from '../store/budget-alerts.js';
import { readSpend } from '../store/spend-usage.js';
import type { OperationDeps } from './operation.js';

export interface BudgetRatio {
  projectId: string;
  slug: string;
  notificationEmail: string | null;
  period: BudgetPeriod;
  starts: number;
  budgetUsd: number;
  spentUsd: number;
  /** spent ÷ budget (a budget of 0 with spend counts as 1). */
  ratio: number;
}

/** Every budget of every budgeted project, with its spend now. */
export async function budgetRatios(
  deps: OperationDeps & { defaultMonthlyBudgetUsd: number | null },
): Promise<BudgetRatio[]> {
  const now = deps.clock.now();
  const projects = await listBudgetedProjects(deps.database, deps.defaultMonthlyBudgetUsd !== null);
  const ratios: BudgetRatio[] = [];
  for (const p of projects) {
    const mode = p.budgetMode === 'own' ? 'own' : 'default';
    const budgets = budgetsOf(
      { mode, monthlyUsd: p.monthlyBudgetUsd, dailyUsd: p.dailyBudgetUsd },
      deps.defaultMonthlyBudgetUsd,
    );
    const spend = await readSpend(deps.database, p.id, now);
    for (const period of ['month', 'day'] as const) {
      const budget = budgets[period];
      if (budget === null) continue;
      const spent = spend[period];
      ratios.push({
        projectId: p.id,
        slug: p.slug,
        notificationEmail: p.notificationEmail,
        period,
        starts: period === 'month' ? spend.monthStart : spend.dayStart,
        budgetUsd: nanoToUsd(budget),
        spentUsd: nanoToUsd(spent),
        ratio: budget > 0 ? spent / budget : spent > 0 ? 1 : 0,
      });
    }
  }
  return ratios;
}

/** Records the thresholds passed and queues their mail; the number of alerts recorded. */
export async function sendBudgetAlerts(
  deps: OperationDeps & { defaultMonthlyBudgetUsd: number | null },
): Promise<number> {
  let recorded = 0;
  for (const r of await budgetRatios(deps)) {
    const passed = ALERT_THRESHOLDS.filter((t) => r.ratio * 100 >= t);
    if (passed.length === 0) continue;
    const alerts = await recordBudgetAlerts(deps.database, {
      projectId: r.projectId,
      period: r.period,
      starts: r.starts,
      thresholds: [...passed],
      now: deps.clock.now(),
      mail: (threshold) => (r.notificationEmail === null ? null : budgetMail(r, r.notificationEmail, threshold)),
    });
    recorded += alerts.length;
  }
  return recorded;
}

function budgetMail(r: BudgetRatio, to: string, threshold: number): MailMessage {
  const which = r.period === 'month' ? 'monthly' : 'daily';
  const full = threshold >= 100;
  return {
    to,
    subject: `[barge] Project ${r.slug} has spent ${threshold} % of its ${which} budget`,
    text: [
      `Project '${r.slug}' has spent ${r.spentUsd} USD of its ${which} budget of ${r.budgetUsd} USD`,
      `(the ${r.period} that began ${isoTime(r.starts)}, UTC).`,
      '',
      full
        ? 'New cargo are refused (402 budget_exceeded) until the period ends or the budget is raised.'
        : 'New cargo are refused (402 budget_exceeded) once spent and reserved cost would pass the budget.',
      `Change it with \`barge project set-budget ${r.slug}\`; \`barge usage ${r.slug}\` shows the spend.`,
      'This mail is sent once for this threshold in this period.',
    ].join('\n'),
  };
}
