/** GET /health (the process answers) and /health/ready (the database answers). */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../../domain/errors.js';
import type { Database } from '../../store/database.js';
import { isDatabaseUnavailable } from '../../store/outage.js';
import { ping } from '../../store/ping.js';
import { sendApiError } from '../errors.js';

const Ok = Type.Object({ status: Type.Literal('ok') }, { examples: [{ status: 'ok' }] });
const Unavailable = Type.Object({ detail: Type.String() }, { examples: [{ detail: 'Database is not reachable.' }] });

export function registerHealth(app: FastifyInstance, deps: { database: Database }): void {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Liveness: the process answers',
        tags: ['health'],
        response: { 200: Ok },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/health/ready',
    {
      schema: {
        summary: 'Readiness: the database answers',
        tags: ['health'],
        response: { 200: Ok, 503: Unavailable },
      },
    },
    async (request, reply) => {
      try {
        await ping(deps.database);
        return { status: 'ok' as const };
      } catch (err) {
        // An outage is logged once by the store, not on every probe of a load balancer.
        if (!isDatabaseUnavailable(err)) request.log.warn({ err }, 'readiness check failed');
        return sendApiError(reply, errors.databaseUnreachable());
      }
    },
  );
}
