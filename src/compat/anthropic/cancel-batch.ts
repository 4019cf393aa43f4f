/** POST /v1/messages/batches/{id}/cancel: the requests not yet sent to a provider are canceled; the others finish. */
import type { TypedScope } from '../../http/typed-scope.js';
import { cancelCompatBatch } from '../batch-cancel.js';
import type { CompatDeps } from '../deps.js';
import { findMessageBatch, messageBatchView } from './batch-view.js';
import { BatchIdParams, COMMON_ERRORS, MessageBatchSchema, NOT_FOUND, SECURITY, TAGS } from './schemas.js';

export function registerCancelBatch(app: TypedScope, deps: CompatDeps): void {
  app.post(
    '/v1/messages/batches/:message_batch_id/cancel',
    {
      schema: {
        summary: 'Cancel a Message Batch',
        description:
          'Every request still pending or batched (not yet with a provider) is canceled at once, never billed; those a provider already has finish. `processing_status` is `canceling` until every request is terminal, then `ended` (the answer may already say `ended`). An ended batch is answered as it is.',
        tags: TAGS,
        security: SECURITY,
        params: BatchIdParams,
        response: { 200: MessageBatchSchema, ...NOT_FOUND, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const row = await findMessageBatch(deps, request, request.params.message_batch_id);
      await cancelCompatBatch(deps.database, deps.clock, row);
      return messageBatchView(deps, request, await findMessageBatch(deps, request, row.id));
    },
  );
}
