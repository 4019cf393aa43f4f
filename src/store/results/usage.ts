/** A project's usage by UTC day and model: what GET /usage and `barge usage` report. */
import type { Database } from '../database.js';
import type { UsageDaysTable } from '../schema.js';

/** One day and model of a project's usage (`day`: days since 1970-01-01). */
export type UsageByDay = Omit<UsageDaysTable, 'project_id'>;

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
  const maybe = (value: unknown) => (value === null ? null : Number(value));
  return (
    rows
      .map((r) => ({
        day: Number(r.day),
        model: r.model,
        cargo: Number(r.cargo),
        requests: Number(r.requests),
        input_tokens: Number(r.input_tokens),
        output_tokens: Number(r.output_tokens),
        cache_creation_input_tokens: Number(r.cache_creation_input_tokens),
        cache_read_input_tokens: Number(r.cache_read_input_tokens),
        cost_usd: maybe(r.cost_usd),
        standard_cost_usd: maybe(r.standard_cost_usd),
      }))
      // In code: the databases' collations may order model names differently.
      .sort((a, b) => a.day - b.day || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))
  );
}
