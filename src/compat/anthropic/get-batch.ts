/** GET /v1/messages/batches/{id}: a Message Batch, counted now (its results_url once it ended). */
import type { TypedScope } from '../../http/typed-scope.js';
import type { CompatDeps } from '../deps.js';
import { findMessageBatch, messageBatchView } from './batch-view.js';
import { BatchIdParams, COMMON_ERRORS, MessageBatchSchema, NOT_FOUND, SECURITY, TAGS } from './schemas.js';

export function registerGetBatch(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/messages/batches/:message_batch_id',
    {
      schema: {
        summary: 'Retrieve a Message Batch',
        description:
          'Idempotent, for polling: `processing_status` is `ended` once every request is (succeeded, errored, canceled or expired); `request_counts` count the requests where they are now.',
        tags: TAGS,
        security: SECURITY,
        params: BatchIdParams,
        response: { 200: MessageBatchSchema, ...NOT_FOUND, ...COMMON_ERRORS },
      },
    },
    async (request) =>
      messageBatchView(deps, request, await findMessageBatch(deps, request, request.params.message_batch_id)),
  );
}
