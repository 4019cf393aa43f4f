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
import { registerApiKeyRoutes } from './routes/api-keys.js';
import { registerProjectRoutes } from './routes/projects.js';
import { registerSessionRoutes, registerSignIn } from './routes/session.js';

export interface AdminRoutesOptions {
  authenticator: AdminAuthenticator;
  database: Database;
  clock: Clock;
  config: Pick<Config, 'secretKey' | 'publicBaseUrl'>;
}

export const adminRoutes: FastifyPluginAsyncTypebox<AdminRoutesOptions> = async (scope, options) => {
  await scope.register(cookie);
  // Answers carry secrets shown once and tenant data: no cache keeps a copy.
  scope.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
  const deps = { database: options.database, clock: options.clock, config: options.config };
  const sessions = {
    database: options.database,
    clock: options.clock,
    authenticator: options.authenticator,
    publicBaseUrl: options.config.publicBaseUrl,
  };
  registerSignIn(scope, sessions);
  await scope.register(async (authenticated: TypedScope) => {
    requireAdmin(authenticated, options.authenticator);
    registerSessionRoutes(authenticated, sessions);
    registerProjectRoutes(authenticated, deps);
    registerApiKeyRoutes(authenticated, deps);
  });
};
