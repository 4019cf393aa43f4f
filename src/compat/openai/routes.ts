/**
 * OpenAI's Files and Batch APIs answered by barge (decisions.md, "Provider-compatible batch
 * endpoints"): a scope inside the API-key scope (the key check, the rate limit and the body budget
 * of the cargo routes apply), whose routes also take the key as Bearer and answer errors in
 * OpenAI's shape. The SDK points at barge with `baseURL` = `<barge>/v1`.
 */
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type CompatDeps, takeBearerKeys } from '../deps.js';
import { answerErrorsAs } from '../error-handler.js';
import { openAIError } from '../error-shapes.js';
import { registerCancelBatch } from './cancel-batch.js';
import { registerCreateBatch } from './create-batch.js';
import { registerDeleteFile } from './delete-file.js';
import { registerFileContent } from './file-content.js';
import { registerGetBatch } from './get-batch.js';
import { registerGetFile } from './get-file.js';
import { registerListBatches } from './list-batches.js';
import { registerListFiles } from './list-files.js';
import { registerUploadFile } from './upload-file.js';

export const openAIBatchRoutes: FastifyPluginAsyncTypebox<CompatDeps> = async (scope, deps) => {
  takeBearerKeys(scope);
  answerErrorsAs(scope, openAIError, deps.bodyLimitBytes);
  // Uploads stream through busboy: one file of at most 200 MB (BARGE_COMPAT_FILE_MAX_BYTES), a few small fields.
  await scope.register(multipart, {
    throwFileSizeLimit: true,
    limits: { fileSize: deps.limits.fileBytes, files: 1, fields: 8, fieldSize: 64 * 1024, parts: 10, headerPairs: 100 },
  });
  registerUploadFile(scope, deps);
  registerListFiles(scope, deps);
  registerGetFile(scope, deps);
  registerFileContent(scope, deps);
  registerDeleteFile(scope, deps);
  registerCreateBatch(scope, deps);
  registerListBatches(scope, deps);
  registerGetBatch(scope, deps);
  registerCancelBatch(scope, deps);
};
