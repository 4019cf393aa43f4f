/** GET /usage: the project's tokens and cost by UTC day and model (src/operations/usage.ts). */
import { Type } from 'typebox';
import type { Clock } from '../../domain/clock.js';
import { errors } from '../../domain/errors.js';
import { MAX_USAGE_DAYS } from '../../domain/usage.js';
import { usageReport } from '../../operations/usage.js';
import type { Database } from '../../store/database.js';
import { authOf } from '../auth.js';
import { apiKeySecurity, authErrorResponses, ErrorBody } from '../schemas.js';
import type { TypedScope } from '../typed-scope.js';

const Day = (description: string) =>
  Type.String({ description: `${description} A UTC day, YYYY-MM-DD.`, examples: ['2026-11-01'] });

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(Day('The first day, included. Default: 29 days before `to`.')),
    to: Type.Optional(Day('The last day, included. Default: today.')),
  },
  { additionalProperties: false },
);

const usd = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const counts = {
  cargo: Type.Integer({ description: 'Cargo whose result was produced (success or failure).' }),
  requests: Type.Integer({ description: 'Their provider requests: a records cargo counts each record.' }),
  input_tokens: Type.Integer({ description: 'Input tokens neither written to nor read from the prompt cache.' }),
  output_tokens: Type.Integer({ description: 'Output tokens, thinking included.' }),
  cache_creation_input_tokens: Type.Integer({
    description: 'Input tokens written to the prompt cache (5-minute and 1-hour writes, each at its price).',
  }),
  cache_read_input_tokens: Type.Integer({ description: 'Input tokens read from the prompt cache.' }),
  cost_usd: usd('Every kind of token at the batch prices; null when no price is known for the model.'),
  standard_cost_usd: usd('The same tokens at the real-time prices.'),
};

export const UsageResponse = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        date: Type.String({ description: 'The UTC day the results were produced, YYYY-MM-DD.' }),
        model: Type.String({ description: 'The model id as submitted.' }),
        ...counts,
      }),
      { description: 'One entry per day and model with results, oldest day first.' },
    ),
    totals: Type.Object({
      ...counts,
      savings_usd: usd('standard_cost_usd − cost_usd: what batching saved.'),
    }),
    budgets: Type.Array(
      Type.Object({
        period: Type.Union([Type.Literal('month'), Type.Literal('day')], {
          description: 'The UTC calendar month, or the UTC day.',
        }),
        starts: Type.String({ description: 'When the period began, ISO 8601 (UTC).' }),
        budget_usd: Type.Number(),
        spent_usd: Type.Number({ description: 'The cost of the results stored in the period.' }),
        reserved_usd: Type.Number({
          description: 'The estimates of accepted cargo not yet finished (a submit must fit with them).',
        }),
      }),
      { description: "The project's spend budgets now, whatever the range asked (empty when it has none)." },
    ),
  },
  {
    examples: [
      {
        data: [
          {
            date: '2026-11-21',
            model: 'claude-sonnet-4-5',
            cargo: 120,
            requests: 340,
            input_tokens: 412000,
            output_tokens: 96000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            cost_usd: 1.338,
            standard_cost_usd: 2.676,
          },
          {
            date: '2026-11-22',
            model: 'svc-mock',
            cargo: 3,
            requests: 3,
            input_tokens: 42,
            output_tokens: 96,
            cache_creation_input_tokens: 2048,
            cache_read_input_tokens: 4096,
            cost_usd: 0,
            standard_cost_usd: 0,
          },
        ],
        totals: {
          cargo: 123,
          requests: 343,
          input_tokens: 412042,
          output_tokens: 96096,
          cache_creation_input_tokens: 2048,
          cache_read_input_tokens: 4096,
          cost_usd: 1.338,
          standard_cost_usd: 2.676,
          savings_usd: 1.338,
        },
        budgets: [
          {
            period: 'month',
            starts: '2026-11-01T00:00:00.000Z',
            budget_usd: 250,
            spent_usd: 1.338,
            reserved_usd: 0.42,
          },
        ],
      },
    ],
  },
);

export interface UsageRouteDeps {
  database: Database;
  clock: Clock;
  /** BARGE_DEFAULT_MONTHLY_BUDGET_USD, for the budgets block. */
  defaultMonthlyBudgetUsd: number | null;
}

export function registerGetUsage(app: TypedScope, deps: UsageRouteDeps): void {
  app.get(
    '/usage',
    {
      schema: {
        summary: "The project's usage and cost",
        description: `Tokens and cost of the project's results by UTC day (the day each result was produced) and model, both days included, at most ${MAX_USAGE_DAYS} days; default the last 30 days. Padding requests a provider's minimum batch size needs are the operator's cost and never appear here.`,
        tags: ['usage'],
        security: apiKeySecurity,
        querystring: UsageQuery,
        response: {
          200: UsageResponse,
          400: {
            ...ErrorBody,
            examples: [{ detail: "Invalid query: from '2026-11-31': use a UTC day as YYYY-MM-DD." }],
            description: `A parameter that is not a day, \`from\` after \`to\`, a range longer than ${MAX_USAGE_DAYS} days, or an unknown parameter.`,
          },
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const { from, to } = request.query;
      const report = await usageReport(deps, { projectId: authOf(request).projectId, from, to });
      if (!report.ok) {
        const { input, message } = report.error;
        throw errors.invalidQuery([
          input ? { path: input.name, message: `'${input.value}': ${input.problem}` } : { path: '', message },
        ]);
      }
      return { data: report.value.data, totals: report.value.totals, budgets: report.value.budgets };
    },
  );
}
