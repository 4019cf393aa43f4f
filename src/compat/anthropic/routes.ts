/**
 * Anthropic's Message Batches API answered by barge (decisions.md, "Provider-compatible batch
 * endpoints"): a scope inside the API-key scope (the key check, the rate limit and the body budget
 * of the cargo routes apply), whose routes also take the key as Bearer and answer errors in
 * Anthropic's shape. The SDK points at barge with `baseURL` = barge's URL.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type CompatDeps, takeBearerKeys } from '../deps.js';
import { answerErrorsAs } from '../error-handler.js';
import { anthropicError } from '../error-shapes.js';
import { registerBatchResults } from './batch-results.js';
import { registerCancelBatch } from './cancel-batch.js';
import { registerCreateBatch } from './create-batch.js';
import { registerDeleteBatch } from './delete-batch.js';
import { registerGetBatch } from './get-batch.js';
import { registerListBatches } from './list-batches.js';

export const anthropicBatchRoutes: FastifyPluginAsyncTypebox<CompatDeps> = async (scope, deps) => {
  takeBearerKeys(scope);
  answerErrorsAs(scope, anthropicError, deps.bodyLimitBytes);
  // A create body (up to 256 MB) is read by its route as a stream, never parsed whole.
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', (_request, payload, done) => done(null, payload));
  registerCreateBatch(scope, deps);
  registerListBatches(scope, deps);
  registerGetBatch(scope, deps);
  registerCancelBatch(scope, deps);
  registerDeleteBatch(scope, deps);
  registerBatchResults(scope, deps);
};
