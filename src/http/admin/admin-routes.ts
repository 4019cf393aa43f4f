/**
 * The admin API, `/admin/v1/`: its own encapsulated scope with its own onRequest hook (the admin
 * token), so nothing of it runs on the cargo API's routes, and nothing of theirs (the API-key check,
 * the rate limit, the body budget) runs here. Every route calls src/operations/, as the CLI does.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.js';
import type { Clock } from '../../domain/clock.js';
import type { Database } from '../../store/database.js';
import { type AdminAuthenticator, requireAdminToken } from './auth.js';
import { refuseNulText } from './nul-guard.js';
import { registerApiKeyRoutes } from './routes/api-keys.js';
import { registerCargoRoutes } from './routes/cargo.js';
import { registerConnectionRoutes } from './routes/connections.js';
import { registerProjectRoutes } from './routes/projects.js';
import { registerProviderRoutes } from './routes/providers.js';
import { registerRecoveryRoutes } from './routes/recoveries.js';
import { registerUsageRoutes } from './routes/usage.js';

export interface AdminRoutesOptions {
  authenticator: AdminAuthenticator;
  database: Database;
  clock: Clock;
  config: Config;
  /** Wakes this process's delivery worker, when it runs one: a redelivery or a recovery was made. */
  wakeDeliveries?: () => void;
}

export const adminRoutes: FastifyPluginAsyncTypebox<AdminRoutesOptions> = async (scope, options) => {
  requireAdminToken(scope, options.authenticator);
  refuseNulText(scope);
  const { database, clock, config } = options;
  const deps = { database, clock, config, wakeDeliveries: options.wakeDeliveries ?? (() => {}) };
  registerProjectRoutes(scope, deps);
  registerApiKeyRoutes(scope, deps);
  registerConnectionRoutes(scope, deps);
  registerCargoRoutes(scope, deps);
  registerRecoveryRoutes(scope, deps);
  registerUsageRoutes(scope, { ...deps, defaultMonthlyBudgetUsd: config.defaultMonthlyBudgetUsd });
  registerProviderRoutes(scope, deps);
};
