/** A project's usage by UTC day and model: what GET /usage and `barge usage` report. */
import { sql } from 'kysely';
import { DAY_MS } from '../../domain/clock.js';
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
  /** Summed over the results whose price was known; null when none was. */
  costUsd: number | null;
  standardCostUsd: number | null;
}

/**
 * Sums the project's results produced on the UTC days `fromDay`..`toDay` (both included), by day
 * and model, oldest day first. One range of the `results_usage` index (project, time), and the
 * cargo row by its key for the model and request count: the work follows the results in the
 * range, never the project's whole history. The day is the time divided by a day's milliseconds,
 * which is integer division on both databases (integer columns).
 */
export async function usageByDay(
  database: Database,
  projectId: string,
  range: { fromDay: number; toDay: number },
): Promise<UsageByDay[]> {
  // A literal, not a parameter: PostgreSQL matches the grouped expression to the selected one by text.
  const day = sql<number>`r.created_at / ${sql.lit(DAY_MS)}`;
  const rows = await database.read
    .selectFrom('results as r')
    .innerJoin('cargo as c', 'c.id', 'r.cargo_id')
    .select((eb) => [
      day.as('day'),
      'c.model as model',
      eb.fn.countAll().as('cargo'),
      eb.fn.sum('c.request_count').as('requests'),
      eb.fn.sum('r.input_tokens').as('input_tokens'),
      eb.fn.sum('r.output_tokens').as('output_tokens'),
      eb.fn.sum('r.cost_usd').as('cost_usd'),
      eb.fn.sum('r.standard_cost_usd').as('standard_cost_usd'),
    ])
    .where('r.project_id', '=', projectId)
    // A canceled cargo's result says so; it never ran, and is never billed (store/cargo/cancel.ts).
    .where('c.status', '!=', 'canceled')
    .where('r.created_at', '>=', range.fromDay * DAY_MS)
    .where('r.created_at', '<', (range.toDay + 1) * DAY_MS)
    .groupBy([day, 'c.model'])
    .execute();
  // PostgreSQL answers sums of bigint as numeric text; both answer null for a sum of nulls only.
  const number = (value: unknown) => Number(value ?? 0);
  const maybe = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return rows
    .map((r) => ({
      day: number(r.day),
      model: r.model,
      cargo: number(r.cargo),
      requests: number(r.requests),
      inputTokens: number(r.input_tokens),
      outputTokens: number(r.output_tokens),
      costUsd: maybe(r.cost_usd),
      standardCostUsd: maybe(r.standard_cost_usd),
    }))
    .sort((a, b) => a.day - b.day || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}
