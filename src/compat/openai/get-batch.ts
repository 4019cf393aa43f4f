/** GET /v1/batches/{id}: a batch, counted now; its output and error files are made when its last request ends. */
import type { TypedScope } from '../../http/typed-scope.js';
import type { CompatDeps } from '../deps.js';
import { batchView, findBatch } from './batch-view.js';
import { BATCH_NOT_FOUND, BATCH_TAGS, BatchIdParams, BatchSchema, COMMON_ERRORS, SECURITY } from './schemas.js';

export function registerGetBatch(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/batches/:batch_id',
    {
      schema: {
        summary: 'Retrieve a batch',
        description:
          '`in_progress` (or `cancelling`) while a request is unfinished; `completed` (or `cancelled`) once every request is, with `output_file_id` (one line per succeeded request) and `error_file_id` (one per failed, canceled or expired request), each null when it would be empty; `failed` when its lines were refused.',
        tags: BATCH_TAGS,
        security: SECURITY,
        params: BatchIdParams,
        response: { 200: BatchSchema, ...BATCH_NOT_FOUND, ...COMMON_ERRORS },
      },
    },
    async (request) => batchView(deps, request, await findBatch(deps, request, request.params.batch_id)),
  );
}
