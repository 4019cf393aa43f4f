/** GET /v1/batches: the project's batches, newest first, a cursor page at a time (`after`, `limit`). */
import { Type } from 'typebox';
import { authOf } from '../../http/auth.js';
import type { TypedScope } from '../../http/typed-scope.js';
import { listCompatBatches } from '../../store/compat/batches.js';
import type { CompatDeps } from '../deps.js';
import { batchView } from './batch-view.js';
import {
  BATCH_TAGS,
  BatchSchema,
  COMMON_ERRORS,
  cursorOf,
  EXAMPLE_BATCH,
  errorAnswer,
  listPage,
  pageOf,
  SECURITY,
} from './schemas.js';

const LIMIT = { default: 20, max: 100 };

const Query = Type.Object(
  {
    after: Type.Optional(Type.String({ description: "The previous page's last id." })),
    limit: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,7}$', description: 'Batches per page, 1 to 100 (default 20).' }),
    ),
  },
  { additionalProperties: false },
);

export function registerListBatches(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/batches',
    {
      schema: {
        summary: 'List batches',
        tags: BATCH_TAGS,
        security: SECURITY,
        querystring: Query,
        response: {
          200: pageOf(BatchSchema, EXAMPLE_BATCH),
          400: errorAnswer(
            'A bad limit or cursor.',
            "Invalid 'limit': an integer from 1 to 100 expected.",
            'limit',
            'invalid_batch_body',
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const { limit, after } = cursorOf(request.query, LIMIT, 'batch');
      const page = await listCompatBatches(deps.database, {
        projectId: authOf(request).projectId,
        api: 'openai',
        limit,
        ...(after === undefined ? {} : { afterId: after }),
      });
      const data = [];
      for (const row of page.rows) data.push(await batchView(deps, request, row));
      return listPage(data, page.hasMore);
    },
  );
}
