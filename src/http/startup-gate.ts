/** The answer of a process whose database is not prepared yet: it started while the database was away. */
import type { FastifyInstance } from 'fastify';
import { errors } from '../domain/errors.js';
import { sendApiError } from './errors.js';

/**
 * Until `prepared()` (the database migrated), every request but GET /health answers 503 with
 * `detail`, readiness included: the process is alive, but nothing it serves would work, and a
 * request that read or wrote a table not made yet would be a 500.
 */
export function installStartupGate(app: FastifyInstance, prepared: () => boolean): void {
  app.addHook('onRequest', async (request, reply) => {
    if (prepared() || request.routeOptions.url === '/health') return;
    return sendApiError(reply, errors.databaseUnreachable());
  });
}
