/** GET /v1/messages/batches: the project's Message Batches, newest first, a page at a time (`limit`, `before_id`, `after_id`). */
import { Type } from 'typebox';
import { authOf } from '../../http/auth.js';
import type { TypedScope } from '../../http/typed-scope.js';
import { listCompatBatches } from '../../store/compat/batches.js';
import type { CompatDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { isCompatId } from '../ids.js';
import { messageBatchView } from './batch-view.js';
import { COMMON_ERRORS, EXAMPLE_BATCH, errorAnswer, MessageBatchSchema, SECURITY, TAGS } from './schemas.js';

const LIMIT = { default: 20, max: 1000 };

const Query = Type.Object(
  {
    limit: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,7}$', description: 'Batches per page, 1 to 1000 (default 20).' }),
    ),
    before_id: Type.Optional(
      Type.String({ description: 'The page just newer than this batch (a previous first_id).' }),
    ),
    after_id: Type.Optional(Type.String({ description: 'The page just older than this batch (a previous last_id).' })),
  },
  { additionalProperties: false },
);

const Page = Type.Object(
  {
    data: Type.Array(MessageBatchSchema),
    has_more: Type.Boolean(),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
  },
  {
    examples: [
      {
        data: [EXAMPLE_BATCH],
        has_more: false,
        first_id: 'msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c',
        last_id: 'msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c',
      },
    ],
  },
);

export function registerListBatches(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/messages/batches',
    {
      schema: {
        summary: 'List Message Batches',
        description:
          "Newest first; `after_id` = the previous page's `last_id` for older ones, `before_id` = its `first_id` for newer ones.",
        tags: TAGS,
        security: SECURITY,
        querystring: Query,
        response: {
          200: Page,
          400: errorAnswer('A bad limit or cursor.', 'invalid_request_error', 'limit: must be between 1 and 1000'),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const { limit: rawLimit, before_id: beforeId, after_id: afterId } = request.query;
      const limit = rawLimit === undefined ? LIMIT.default : Number(rawLimit);
      if (limit < 1 || limit > LIMIT.max)
        throw compatErrors.invalidBody(`limit: must be between 1 and ${LIMIT.max}`, 'limit');
      if (beforeId !== undefined && afterId !== undefined) {
        throw compatErrors.invalidBody('before_id and after_id cannot be given together', 'before_id');
      }
      for (const [name, value] of [
        ['before_id', beforeId],
        ['after_id', afterId],
      ] as const) {
        if (value !== undefined && !isCompatId('messageBatch', value)) {
          throw compatErrors.invalidBody(`${name}: '${value}' is not a message batch id`, name);
        }
      }
      const page = await listCompatBatches(deps.database, {
        projectId: authOf(request).projectId,
        api: 'anthropic',
        limit,
        ...(beforeId === undefined ? {} : { beforeId }),
        ...(afterId === undefined ? {} : { afterId }),
      });
      const data = [];
      for (const row of page.rows) data.push(await messageBatchView(deps, request, row));
      return { data, has_more: page.hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },
  );
}
