/**
 * Text with a NUL character, refused before any handler runs: PostgreSQL cannot hold it in a text
 * column (it fails the statement), and no name, id or setting of the admin API has one. A path
 * parameter with one names nothing (404); a query parameter or a body field is a 400 naming it.
 */
import type { FastifyInstance } from 'fastify';
import { errors, type FieldError } from '../../domain/errors.js';

export function refuseNulText(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (request) => {
    if (Object.values((request.params ?? {}) as Record<string, unknown>).some(hasNul)) {
      throw errors.routeNotFound(request.method, request.url);
    }
    const inQuery = nulPaths(request.query, '').map((path) => path.slice(1));
    if (inQuery.length > 0) throw errors.invalidQuery(inQuery.map(refused));
    const inBody = nulPaths(request.body, '');
    if (inBody.length > 0) throw errors.invalidBody(inBody.map(refused));
  });
}

const hasNul = (value: unknown) => typeof value === 'string' && value.includes('\u0000');

const refused = (path: string): FieldError => ({ path, message: 'must not contain a NUL character' });

/** The JSON pointers of the strings (keys included) holding a NUL, in a value already bounded by the body limit. */
function nulPaths(value: unknown, at: string): string[] {
  if (hasNul(value)) return [at];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => (hasNul(key) ? [at] : nulPaths(item, `${at}/${key}`)));
}
