/** POST /v1/batches/{id}/cancel: the requests not yet sent to a provider are canceled; `cancelling`, then `cancelled`. */
import type { TypedScope } from '../../http/typed-scope.js';
import { cancelCompatBatch } from '../batch-cancel.js';
import type { CompatDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { batchView, findBatch } from './batch-view.js';
import {
  BATCH_NOT_FOUND,
  BATCH_TAGS,
  BatchIdParams,
  BatchSchema,
  COMMON_ERRORS,
  errorAnswer,
  SECURITY,
} from './schemas.js';

export function registerCancelBatch(app: TypedScope, deps: CompatDeps): void {
  app.post(
    '/v1/batches/:batch_id/cancel',
    {
      schema: {
        summary: 'Cancel a batch',
        description:
          'Every request still pending or batched (not yet with a provider) is canceled at once (never billed; `batch_cancelled` in the error file); those a provider already has finish. `cancelling` until every request is terminal, then `cancelled`. A completed, cancelled or failed batch cannot be canceled (400).',
        tags: BATCH_TAGS,
        security: SECURITY,
        params: BatchIdParams,
        response: {
          200: BatchSchema,
          400: errorAnswer(
            'The batch has already ended.',
            "Cannot cancel batch batch_01jd5q3k8m9x2v4w6y8z0a1b2d: its status is 'completed'.",
            null,
            'cannot_cancel_batch',
          ),
          ...BATCH_NOT_FOUND,
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const found = await findBatch(deps, request, request.params.batch_id);
      const before = await batchView(deps, request, found);
      if (before.status === 'completed' || before.status === 'cancelled' || before.status === 'failed') {
        throw compatErrors.cannotCancel(found.id, before.status);
      }
      await cancelCompatBatch(deps.database, deps.clock, await findBatch(deps, request, found.id));
      return batchView(deps, request, await findBatch(deps, request, found.id));
    },
  );
}
