/** GET /v1/files: the project's files, newest first (or `order=asc`), a cursor page at a time. */
import { Type } from 'typebox';
import { authOf } from '../../http/auth.js';
import type { TypedScope } from '../../http/typed-scope.js';
import { listCompatFiles } from '../../store/compat/files.js';
import type { CompatDeps } from '../deps.js';
import { fileView } from './file-view.js';
import {
  COMMON_ERRORS,
  cursorOf,
  EXAMPLE_FILE,
  errorAnswer,
  FILE_TAGS,
  FileSchema,
  listPage,
  pageOf,
  SECURITY,
} from './schemas.js';

const LIMIT = { default: 10_000, max: 10_000 };

const Query = Type.Object(
  {
    purpose: Type.Optional(Type.String({ description: 'Only files of this purpose (`batch`, `batch_output`).' })),
    limit: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,7}$', description: 'Files per page, 1 to 10,000 (default 10,000).' }),
    ),
    order: Type.Optional(
      Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'By creation; default desc.' }),
    ),
    after: Type.Optional(Type.String({ description: "The previous page's last id." })),
  },
  { additionalProperties: false },
);

export function registerListFiles(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/files',
    {
      schema: {
        summary: 'List files',
        description: "The project's uploads and batch output files, until deleted or past their retention.",
        tags: FILE_TAGS,
        security: SECURITY,
        querystring: Query,
        response: {
          200: pageOf(FileSchema, EXAMPLE_FILE),
          400: errorAnswer(
            'A bad limit, order or cursor.',
            "Invalid 'limit': an integer from 1 to 10000 expected.",
            'limit',
            'invalid_batch_body',
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const { purpose, order } = request.query;
      const { limit, after } = cursorOf(request.query, LIMIT, 'file');
      const page = await listCompatFiles(deps.database, {
        projectId: authOf(request).projectId,
        limit,
        ascending: order === 'asc',
        ...(after === undefined ? {} : { after }),
        ...(purpose === undefined ? {} : { purpose }),
      });
      const data = page.rows.map(fileView);
      return listPage(data, page.hasMore);
    },
  );
}
