/**
 * A project's usage report (decisions.md, "Usage and cost"): tokens and cost by UTC day and model
 * over a range of days, with totals. GET /usage answers it and `barge usage` prints it, so the
 * report is already in their shared JSON shape.
 */

import { isoTime } from '../domain/clock.js';
import { type BudgetPeriod, type Budgets, budgetsOf, hasBudget, nanoToUsd } from '../domain/spend.js';
import { formatUtcDay, roundUsd, type UsageRangeProblem, usageRange } from '../domain/usage.js';
import { findProjectById, findProjectBySlug } from '../store/admin/projects.js';
import { type UsageByDay, usageByDay } from '../store/results/usage.js';
import { readSpend } from '../store/spend-usage.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

/** One day and model of the report: the stored usage, its day as `YYYY-MM-DD`, its costs rounded. */
export type UsageRow = { date: string } & Omit<UsageByDay, 'day'>;

export interface UsageTotals extends Omit<UsageRow, 'date' | 'model'> {
  /** standard_cost_usd − cost_usd: what batching saved. */
  savings_usd: number | null;
}

/** One of the project's spend budgets, with what counts against it now. */
export interface BudgetStatus {
  period: BudgetPeriod;
  /** When the period began (UTC), ISO 8601. */
  starts: string;
  budget_usd: number;
  /** The cost of the results stored in the period. */
  spent_usd: number;
  /** The estimates of its accepted cargo not yet finished. */
  reserved_usd: number;
}

export interface UsageReport {
  /** The days covered, `YYYY-MM-DD`, both included (the defaults resolved). */
  from: string;
  to: string;
  data: UsageRow[];
  totals: UsageTotals;
  /** One per budget the project has (empty when none). */
  budgets: BudgetStatus[];
}

/** Reads what a usage report needs of the configuration: the default monthly budget. */
export type UsageDeps = OperationDeps & { defaultMonthlyBudgetUsd?: number | null };

/**
 * The usage of a project (by slug, or by id when the caller has authenticated it) over `from`..`to`
 * (UTC days `YYYY-MM-DD`, both included; default the last 30 days). Padding requests are never
 * on a project: they are on their batch.
 */
export async function usageReport(
  deps: UsageDeps,
  input: ({ slug: string } | { projectId: string }) & { from?: string; to?: string },
): Promise<Result<UsageReport>> {
  const range = usageRange({ from: input.from, to: input.to }, deps.clock.now());
  if (isProblem(range)) return refuse(refusals.invalidUsageRange(range.name, range.value, range.problem));
  const project =
    'projectId' in input
      ? await findProjectById(deps.database, input.projectId)
      : await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound('slug' in input ? input.slug : input.projectId));
  const rows = await usageByDay(deps.database, project.id, range);
  return succeed({
    from: formatUtcDay(range.fromDay),
    to: formatUtcDay(range.toDay),
    data: rows.map(usageRow),
    totals: totalsOf(rows),
    budgets: await budgetStatus(deps, project.id, budgetsOf(project.spend, deps.defaultMonthlyBudgetUsd ?? null)),
  });
}

/** The project's budgets now, month first; nothing read when it has none. */
export async function budgetStatus(deps: OperationDeps, projectId: string, budgets: Budgets): Promise<BudgetStatus[]> {
  if (!hasBudget(budgets)) return [];
  const spend = await readSpend(deps.database, projectId, deps.clock.now());
  const status: BudgetStatus[] = [];
  for (const period of ['month', 'day'] as const) {
    const budget = budgets[period];
    if (budget === null) continue;
    status.push({
      period,
      starts: isoTime(period === 'month' ? spend.monthStart : spend.dayStart),
      budget_usd: nanoToUsd(budget),
      spent_usd: nanoToUsd(spend[period]),
      reserved_usd: nanoToUsd(spend.reserved),
    });
  }
  return status;
}

function isProblem(range: ReturnType<typeof usageRange>): range is UsageRangeProblem {
  return 'problem' in range;
}

function usageRow({ day, ...row }: UsageByDay): UsageRow {
  return {
    date: formatUtcDay(day),
    ...row,
    cost_usd: usd(row.cost_usd),
    standard_cost_usd: usd(row.standard_cost_usd),
  };
}

function totalsOf(rows: UsageByDay[]): UsageTotals {
  const sum = (pick: (row: UsageByDay) => number) => rows.reduce((total, row) => total + pick(row), 0);
  // Costs add up over the rows whose price was known: null when there were results and no price
  // was known for any, 0 when there were none.
  const sumKnown = (pick: (row: UsageByDay) => number | null) => {
    const known = rows.map(pick).filter((v) => v !== null);
    return rows.length > 0 && known.length === 0 ? null : known.reduce((total, v) => total + v, 0);
  };
  const cost = sumKnown((r) => r.cost_usd);
  const standard = sumKnown((r) => r.standard_cost_usd);
  return {
    cargo: sum((r) => r.cargo),
    requests: sum((r) => r.requests),
    input_tokens: sum((r) => r.input_tokens),
    output_tokens: sum((r) => r.output_tokens),
    cache_creation_input_tokens: sum((r) => r.cache_creation_input_tokens),
    cache_read_input_tokens: sum((r) => r.cache_read_input_tokens),
    cost_usd: usd(cost),
    standard_cost_usd: usd(standard),
    savings_usd: cost === null || standard === null ? null : usd(standard - cost),
  };
}

const usd = (value: number | null) => (value === null ? null : roundUsd(value));
