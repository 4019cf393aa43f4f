/** A project's usage by UTC day and model: what GET /usage and `barge usage` report. */
import type { Database } from '../database.js';

export interface UsageByDay {
  /** The UTC day the results were produced on, as days since 1970-01-01. */
  day: number;
  /** The model id the cargo were submitted with. */
  model: string;
  /** Cargo with a result that day. */
  cargo: number;
  /** Their provider requests (a records cargo counts each record). */
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Prompt-cache writes (1-hour ones included) and reads. */
  cacheCreationTokens: number;
  cacheReadTokens: number;
  /** Summed over the results whose price was known; null when none was. */
  costUsd: number | null;
  standardCostUsd: number | null;
}

/**
 * The project's usage on the UTC days `fromDay`..`toDay` (both included), by day and model, oldest
 * day first: a range of `usage_days` (migration 026), a row per day and model, whatever the number
 * of results.
 */
export async function usageByDay(
  database: Database,
  projectId: string,
  range: { fromDay: number; toDay: number },
): Promise<UsageByDay[]> {
  const rows = await database.read
    .selectFrom('usage_days')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('day', '>=', range.fromDay)
    .where('day', '<=', range.toDay)
    .execute();
  // PostgreSQL answers bigint columns as text.
  const maybe = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return (
    rows
      .map((r) => ({
        day: Number(r.day),
        model: r.model,
        cargo: Number(r.cargo),
        requests: Number(r.requests),
        inputTokens: Number(r.input_tokens),
        outputTokens: Number(r.output_tokens),
        cacheCreationTokens: Number(r.cache_creation_input_tokens),
        cacheReadTokens: Number(r.cache_read_input_tokens),
        costUsd: maybe(r.cost_usd),
        standardCostUsd: maybe(r.standard_cost_usd),
      }))
      // In code: the databases' collations may order model names differently.
      .sort((a, b) => a.day - b.day || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))
  );
}
