/** GET /v1/files/{id}/content: a file's bytes as stored, streamed a chunk at a time. */
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { TypedScope } from '../../http/typed-scope.js';
import { compatFileChunks } from '../../store/compat/files.js';
import type { CompatDeps } from '../deps.js';
import { findFile } from './file-view.js';
import { COMMON_ERRORS, FILE_NOT_FOUND, FILE_TAGS, FileIdParams, SECURITY } from './schemas.js';

const OCTETS = 'application/octet-stream';

const Content = Type.String({
  format: 'binary',
  description:
    "The file's bytes: an upload as sent; a batch's output or error file as JSONL, one line a request in submission order.",
  examples: [
    '{"id":"batch_req_01jd5q3k8m9x2v4w6y8z0a1b2c","custom_id":"q1","response":{"status_code":200,"request_id":"crg_01jd5q3k8m9x2v4w6y8z0a1b2c","body":{"id":"msg_mock_5f2c1a","object":"chat.completion","created":1795428250,"model":"svc-mock","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}},"error":null}\n',
  ],
});

export function registerFileContent(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/files/:file_id/content',
    {
      schema: {
        summary: "Retrieve a file's content",
        tags: FILE_TAGS,
        security: SECURITY,
        params: FileIdParams,
        response: { 200: { content: { [OCTETS]: { schema: Content } } }, ...FILE_NOT_FOUND, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const row = await findFile(deps, request, request.params.file_id);
      reply.header('content-length', String(row.bytes));
      // A byte stream, not objects: it reads the next chunk when the socket drained the last,
      // where an object stream would read 16 chunks ahead.
      const content = Readable.from(compatFileChunks(deps.database, row.id), { objectMode: false });
      return reply.type(OCTETS).send(content as never);
    },
  );
}
