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
import { registerApiKeyRoutes } from './routes/api-keys.js';
import { registerProjectRoutes } from './routes/projects.js';

export interface AdminRoutesOptions {
  authenticator: AdminAuthenticator;
  database: Database;
  clock: Clock;
  config: Pick<Config, 'secretKey'>;
}

export const adminRoutes: FastifyPluginAsyncTypebox<AdminRoutesOptions> = async (scope, options) => {
  requireAdminToken(scope, options.authenticator);
  const deps = { database: options.database, clock: options.clock, config: options.config };
  registerProjectRoutes(scope, deps);
  registerApiKeyRoutes(scope, deps);
};
