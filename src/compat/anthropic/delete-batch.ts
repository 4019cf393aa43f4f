/** DELETE /v1/messages/batches/{id}: an ended batch and its results file are gone (404 afterwards); its cargo stay. */
import { Type } from 'typebox';
import type { TypedScope } from '../../http/typed-scope.js';
import { deleteCompatBatch } from '../../store/compat/delete.js';
import { batchProgress } from '../batch-progress.js';
import { type CompatDeps, progressDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { findMessageBatch } from './batch-view.js';
import { BatchIdParams, COMMON_ERRORS, errorAnswer, NOT_FOUND, SECURITY, TAGS } from './schemas.js';

const Deleted = Type.Object(
  { id: Type.String(), type: Type.Literal('message_batch_deleted') },
  { examples: [{ id: 'msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c', type: 'message_batch_deleted' }] },
);

export function registerDeleteBatch(app: TypedScope, deps: CompatDeps): void {
  app.delete(
    '/v1/messages/batches/:message_batch_id',
    {
      schema: {
        summary: 'Delete a Message Batch',
        description:
          'Only an ended batch: the batch and its results file are gone afterwards (404); its requests stay as cargo of the project (GET /cargo), under their own retention.',
        tags: TAGS,
        security: SECURITY,
        params: BatchIdParams,
        response: {
          200: Deleted,
          400: errorAnswer(
            'The batch has not ended: cancel it first and wait.',
            'invalid_request_error',
            'message_batch msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c cannot be deleted while it is processing; cancel it and wait until it has ended.',
          ),
          ...NOT_FOUND,
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const found = await findMessageBatch(deps, request, request.params.message_batch_id);
      const { row } = await batchProgress(progressDeps(deps, request.log), found);
      if (row.state !== 'ended') throw compatErrors.deleteNotEnded(row.id);
      if (!(await deleteCompatBatch(deps.database, row.id, { kind: 'ended' }, deps.clock.now())))
        throw compatErrors.messageBatchNotFound(row.id);
      return { id: row.id, type: 'message_batch_deleted' as const };
    },
  );
}
