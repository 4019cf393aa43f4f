/** GET /metrics: the process's Prometheus metrics, behind a bearer token when one is configured. */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { errors } from '../../domain/errors.js';
import { sendApiError } from '../errors.js';

/**
 * GET /metrics: the Prometheus text format of the process's registry. With a token configured
 * (BARGE_METRICS_TOKEN) the scraper must send it as a bearer token; the body says nothing a
 * tenant owns, but queue depths and model names are the operator's business.
 */
export function registerMetrics(app: FastifyInstance, deps: { registry: Registry; token: string | null }): void {
  const expected = deps.token === null ? null : Buffer.from(`Bearer ${deps.token}`);
  app.get(
    '/metrics',
    { schema: { summary: 'Prometheus metrics of this process', tags: ['health'], hide: true } },
    async (request, reply) => {
      if (expected !== null) {
        const given = Buffer.from(request.headers.authorization ?? '');
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
          return sendApiError(reply, errors.metricsUnauthorized());
        }
      }
      const body = await deps.registry.metrics();
      return reply.type(deps.registry.contentType).send(body);
    },
  );
}
