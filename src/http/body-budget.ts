/** A byte budget for the request bodies an API process holds at once; one not fitting beside the rest gets 503. */
import type { FastifyInstance } from 'fastify';
import { errors } from '../domain/errors.js';

/**
 * The bytes of request bodies this process holds at once. A body is held several times over while
 * it is read, parsed and turned into its stored row; 300 concurrent 10 MB bodies exhausted the
 * heap. Each request with a body reserves its declared length (the body limit when it declares
 * none) before the body is read, and gives it back when answered; one that does not fit is
 * answered 503 with Retry-After at once, its body unread (and its connection closed).
 */
export function limitBodiesInFlight(scope: FastifyInstance, options: { budgetBytes: number; bodyLimit: number }): void {
  let held = 0;
  const reserved = new WeakMap<object, number>();
  const release = (request: object) => {
    const bytes = reserved.get(request);
    if (bytes === undefined) return;
    reserved.delete(request);
    held -= bytes;
  };
  scope.addHook('preParsing', async (request, _reply, payload) => {
    const length = request.headers['content-length'];
    if (length === undefined && request.headers['transfer-encoding'] === undefined) return payload;
    const declared = Number(length);
    const bytes =
      Number.isFinite(declared) && declared >= 0 ? Math.min(declared, options.bodyLimit) : options.bodyLimit;
    if (bytes === 0) return payload;
    // One body alone always fits: BARGE_BODY_LIMIT_BYTES bounds it, and a 503 for a body that can
    // never fit would send its client retrying forever.
    if (held > 0 && held + bytes > options.budgetBytes) throw errors.serverBusy(1);
    held += bytes;
    reserved.set(request, bytes);
    return payload;
  });
  scope.addHook('onResponse', async (request) => release(request));
  scope.addHook('onRequestAbort', async (request) => release(request));
}
