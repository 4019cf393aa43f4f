/**
 * The admin API, `/admin/v1/`: its own encapsulated scope with its own hooks (the cookie parser,
 * the admin token or dashboard session), so nothing of it runs on the cargo API's routes, and
 * nothing of theirs (the API-key check, the rate limit, the body budget) runs here. Every route
 * calls src/operations/, as the CLI does.
 */
import cookie from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.js';
import type { Clock } from '../../domain/clock.js';
import type { Database } from '../../store/database.js';
import type { TypedScope } from '../typed-scope.js';
import { type AdminAuthenticator, requireAdmin } from './auth.js';
import { refuseNulText } from './nul-guard.js';
import { registerApiKeyRoutes } from './routes/api-keys.js';
import { registerCargoRoutes } from './routes/cargo.js';
import { registerConnectionRoutes } from './routes/connections.js';
import { registerProjectRoutes } from './routes/projects.js';
import { registerProviderRoutes } from './routes/providers.js';
import { registerRecoveryRoutes } from './routes/recoveries.js';
import { registerSessionRoutes, registerSignIn } from './routes/session.js';
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
  await scope.register(cookie);
  refuseNulText(scope);
  // Answers carry secrets shown once and tenant data: no cache keeps a copy.
  scope.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
  const { database, clock, config } = options;
  const deps = { database, clock, config, wakeDeliveries: options.wakeDeliveries ?? (() => {}) };
  const sessions = { database, clock, authenticator: options.authenticator, publicBaseUrl: config.publicBaseUrl };
  // Signing in is the one route without a caller yet; every other one is in the authenticated scope.
  registerSignIn(scope, sessions);
  await scope.register(async (authenticated: TypedScope) => {
    requireAdmin(authenticated, options.authenticator, config.publicBaseUrl);
    registerSessionRoutes(authenticated, sessions);
    registerProjectRoutes(authenticated, deps);
    registerApiKeyRoutes(authenticated, deps);
    registerConnectionRoutes(authenticated, deps);
    registerCargoRoutes(authenticated, deps);
    registerRecoveryRoutes(authenticated, deps);
    registerUsageRoutes(authenticated, { ...deps, defaultMonthlyBudgetUsd: config.defaultMonthlyBudgetUsd });
    registerProviderRoutes(authenticated, deps);
  });
};
