/** The API-key scope: every route of a project's API key (cargo, usage, the provider-compatible batches), behind the key check, the rate limit and the body budget. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { anthropicBatchRoutes } from '../compat/anthropic/routes.js';
import type { CompatDeps } from '../compat/deps.js';
import { openAIBatchRoutes } from '../compat/openai/routes.js';
import type { Clock } from '../domain/clock.js';
import type { RoutingTable } from '../domain/model-routing.js';
import type { Database } from '../store/database.js';
import { type Authenticator, authOf, requireApiKey } from './auth.js';
import { limitBodiesInFlight } from './body-budget.js';
import { type RateLimitOptions, registerRateLimit } from './rate-limit.js';
import { registerCancelCargo } from './routes/cancel-cargo.js';
import { registerGetCargoResult } from './routes/get-cargo-result.js';
import { registerGetUsage } from './routes/get-usage.js';
import { registerListCargo } from './routes/list-cargo.js';
import { registerListModels } from './routes/list-models.js';
import { type LoadCargoDeps, registerLoadCargo } from './routes/load-cargo.js';
import { registerTrackCargo } from './routes/track-cargo.js';

export interface CargoRoutesOptions {
  authenticator: Authenticator;
  /** Bytes of request bodies held at once (body-budget.ts), and the largest one body may be. */
  bodies: { budgetBytes: number; bodyLimit: number };
  database: Database;
  clock: Clock;
  rateLimit: Omit<RateLimitOptions, 'projectOf'>;
  loadCargo: LoadCargoDeps;
  /** The catalog and the providers enabled here (GET /models). */
  models: RoutingTable;
  /** BARGE_DEFAULT_MONTHLY_BUDGET_USD (GET /usage's budgets). */
  defaultMonthlyBudgetUsd: number | null;
  /** The provider-compatible batch endpoints (src/compat/). */
  compat: CompatDeps;
}

/**
 * Every operation of a project's API key (its cargo, its usage), in one encapsulated scope whose onRequest hooks check the API key and
 * then the project's rate limit. Both run before the body is read, so the check order of README
 * holds: header missing, format, key lookup, expiry, project inactive (401/403), rate limit
 * (429), then the body (400/413/415), the delivery target (422) and ownership (404) in the route.
 * Health, docs and the OpenAPI document are registered outside it and need no key.
 */
export const cargoRoutes: FastifyPluginAsyncTypebox<CargoRoutesOptions> = async (scope, options) => {
  requireApiKey(scope, options.authenticator);
  await registerRateLimit(scope, { ...options.rateLimit, projectOf: authOf });
  scope.addHook('onRequest', scope.rateLimit());
  limitBodiesInFlight(scope, options.bodies);

  registerLoadCargo(scope, options.loadCargo);
  registerTrackCargo(scope, { database: options.database });
  registerGetCargoResult(scope, { database: options.database });
  registerCancelCargo(scope, { database: options.database, clock: options.clock });
  registerListCargo(scope, { database: options.database });
  registerGetUsage(scope, {
    database: options.database,
    clock: options.clock,
    defaultMonthlyBudgetUsd: options.defaultMonthlyBudgetUsd,
  });
  registerListModels(scope, { models: options.models });
  // The providers' own batch APIs, each a scope of its own inside this one: the same key check,
  // rate limit and body budget, their own error shapes and body parsers.
  await scope.register(anthropicBatchRoutes, options.compat);
  await scope.register(openAIBatchRoutes, options.compat);
};
