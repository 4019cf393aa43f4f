/** DELETE /v1/files/{id}: a file and its bytes are gone (404 afterwards); batches made from it stay. */
import { Type } from 'typebox';
import type { TypedScope } from '../../http/typed-scope.js';
import { deleteCompatFile } from '../../store/compat/files.js';
import type { CompatDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { findFile } from './file-view.js';
import { COMMON_ERRORS, FILE_NOT_FOUND, FILE_TAGS, FileIdParams, SECURITY } from './schemas.js';

const Deleted = Type.Object(
  { id: Type.String(), object: Type.Literal('file'), deleted: Type.Boolean() },
  { examples: [{ id: 'file-01jd5q3k8m9x2v4w6y8z0a1b2c', object: 'file', deleted: true }] },
);

export function registerDeleteFile(app: TypedScope, deps: CompatDeps): void {
  app.delete(
    '/v1/files/:file_id',
    {
      schema: {
        summary: 'Delete a file',
        description: "Its bytes are released from the project's storage budget.",
        tags: FILE_TAGS,
        security: SECURITY,
        params: FileIdParams,
        response: { 200: Deleted, ...FILE_NOT_FOUND, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const row = await findFile(deps, request, request.params.file_id);
      if (!(await deleteCompatFile(deps.database, row.id))) throw compatErrors.fileNotFound(row.id);
      return { id: row.id, object: 'file' as const, deleted: true };
    },
  );
}
