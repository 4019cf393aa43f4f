/** The admin API's usage of a project: tokens and cost by UTC day and model, as GET /usage gives it. */
import type { Clock } from '../../../domain/clock.js';
import { MAX_USAGE_DAYS } from '../../../domain/usage.js';
import { usageReport } from '../../../operations/usage.js';
import type { Database } from '../../../store/database.js';
import { UsageQuery } from '../../routes/get-usage.js';
import type { TypedScope } from '../../typed-scope.js';
import { adminOf } from '../auth.js';
import { assertProjectVisible, outcome } from '../refusals.js';
import { AdminUsageBody } from '../report-schemas.js';
import {
  adminAuthErrorResponses,
  adminTokenSecurity,
  errorExample,
  projectNotFoundResponse,
  SlugParams,
} from '../schemas.js';

export interface UsageRoutesDeps {
  database: Database;
  clock: Clock;
  /** BARGE_DEFAULT_MONTHLY_BUDGET_USD, for the budgets block. */
  defaultMonthlyBudgetUsd: number | null;
}

export function registerUsageRoutes(scope: TypedScope, deps: UsageRoutesDeps): void {
  scope.get(
    '/projects/:slug/usage',
    {
      schema: {
        summary: "A project's usage and cost",
        description: `What GET /usage answers the project's own keys (src/operations/usage.ts), with \`from\` and \`to\`, the days covered: tokens and cost by UTC day (the day each result was produced) and model, oldest day first, only days with results (a chart fills the others with zeros), both days included, at most ${MAX_USAGE_DAYS} days; default the last 30.`,
        tags: ['admin: usage'],
        security: adminTokenSecurity,
        params: SlugParams,
        querystring: UsageQuery,
        response: {
          200: AdminUsageBody,
          400: errorExample(
            "Invalid query: from '2026-11-31': use a UTC day as YYYY-MM-DD.",
            `A parameter that is not a day, \`from\` after \`to\`, a range longer than ${MAX_USAGE_DAYS} days, or an unknown parameter.`,
          ),
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const { from, to } = request.query;
      return outcome(await usageReport(deps, { slug, from, to }), { query: true });
    },
  );
}
