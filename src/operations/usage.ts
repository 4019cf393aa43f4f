/**
 * A project's usage report (decisions.md, "Usage and cost"): tokens and cost by UTC day and model
 * over a range of days, with totals. GET /usage answers it and `barge usage` prints it, so the
 * report is already in their shared JSON shape.
 */
import { formatUtcDay, roundUsd, type UsageRangeProblem, usageRange } from '../domain/usage.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import { type UsageByDay, usageByDay } from '../store/results/usage.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export interface UsageRow {
  /** The UTC day, `YYYY-MM-DD`. */
  date: string;
  model: string;
  cargo: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  /** Input tokens written to the prompt cache (5-minute and 1-hour writes). */
  cache_creation_input_tokens: number;
  /** Input tokens read from the prompt cache. */
  cache_read_input_tokens: number;
  /** At the batch prices; null when no price was known for any of these results. */
  cost_usd: number | null;
  /** The same tokens at the real-time prices. */
  standard_cost_usd: number | null;
}

export interface UsageTotals extends Omit<UsageRow, 'date' | 'model'> {
  /** standard_cost_usd − cost_usd: what batching saved. */
  savings_usd: number | null;
}

export interface UsageReport {
  /** The days covered, `YYYY-MM-DD`, both included (the defaults resolved). */
  from: string;
  to: string;
  data: UsageRow[];
  totals: UsageTotals;
}

/**
 * The usage of a project (by slug, or by id when the caller has authenticated it) over `from`..`to`
 * (UTC days `YYYY-MM-DD`, both included; default the last 30 days). Padding requests are never
 * on a project: they are on their batch.
 */
export async function usageReport(
  deps: OperationDeps,
  input: ({ slug: string } | { projectId: string }) & { from?: string; to?: string },
): Promise<Result<UsageReport>> {
  const range = usageRange({ from: input.from, to: input.to }, deps.clock.now());
  if (isProblem(range)) return refuse(refusals.invalidUsageRange(range.name, range.value, range.problem));
  let projectId: string;
  if ('projectId' in input) {
    projectId = input.projectId;
  } else {
    const project = await findProjectBySlug(deps.database, input.slug);
    if (!project) return refuse(refusals.projectNotFound(input.slug));
    projectId = project.id;
  }
  const rows = await usageByDay(deps.database, projectId, range);
  return succeed({
    from: formatUtcDay(range.fromDay),
    to: formatUtcDay(range.toDay),
    data: rows.map(usageRow),
    totals: totalsOf(rows),
  });
}

function isProblem(range: ReturnType<typeof usageRange>): range is UsageRangeProblem {
  return 'problem' in range;
}

function usageRow(row: UsageByDay): UsageRow {
  return {
    date: formatUtcDay(row.day),
    model: row.model,
    cargo: row.cargo,
    requests: row.requests,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    cache_creation_input_tokens: row.cacheCreationTokens,
    cache_read_input_tokens: row.cacheReadTokens,
    cost_usd: usd(row.costUsd),
    standard_cost_usd: usd(row.standardCostUsd),
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
  const cost = sumKnown((r) => r.costUsd);
  const standard = sumKnown((r) => r.standardCostUsd);
  return {
    cargo: sum((r) => r.cargo),
    requests: sum((r) => r.requests),
    input_tokens: sum((r) => r.inputTokens),
    output_tokens: sum((r) => r.outputTokens),
    cache_creation_input_tokens: sum((r) => r.cacheCreationTokens),
    cache_read_input_tokens: sum((r) => r.cacheReadTokens),
    cost_usd: usd(cost),
    standard_cost_usd: usd(standard),
    savings_usd: cost === null || standard === null ? null : usd(standard - cost),
  };
}

const usd = (value: number | null) => (value === null ? null : roundUsd(value));
