/** The error handler of a provider-compatible scope: every failure answered in the shape of the API spoken. */
import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { apiErrorOf } from '../http/errors.js';
import type { ShapedError } from './error-shapes.js';

/**
 * Replaces the app's `{detail}` answers in `scope` (its routes, and the hooks they inherit: the
 * key check, the rate limit, the body budget) with `shape`'s.
 */
export function answerErrorsAs(
  scope: FastifyInstance,
  shape: (error: ApiError) => ShapedError,
  bodyLimit: number,
): void {
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = error instanceof ApiError ? error : apiErrorOf(error, request, bodyLimit);
    const { statusCode, headers, body } = shape(apiError);
    // The "request completed" line names the code, as the app's own answers do.
    reply.log = reply.log.child({ code: apiError.code });
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    return reply.code(statusCode).send(body);
  });
}
