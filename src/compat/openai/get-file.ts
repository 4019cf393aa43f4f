/** GET /v1/files/{id}: one of the project's files. */
import type { TypedScope } from '../../http/typed-scope.js';
import type { CompatDeps } from '../deps.js';
import { fileView, findFile } from './file-view.js';
import { COMMON_ERRORS, FILE_NOT_FOUND, FILE_TAGS, FileIdParams, FileSchema, SECURITY } from './schemas.js';

export function registerGetFile(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/files/:file_id',
    {
      schema: {
        summary: 'Retrieve a file',
        tags: FILE_TAGS,
        security: SECURITY,
        params: FileIdParams,
        response: { 200: FileSchema, ...FILE_NOT_FOUND, ...COMMON_ERRORS },
      },
    },
    async (request) => fileView(await findFile(deps, request, request.params.file_id)),
  );
}
