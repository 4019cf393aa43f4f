/**
 * POST /v1/batches: a batch from an uploaded input file, each line one cargo of the project. The
 * lines are read and checked now (batch-lines.ts): a bad line makes the batch `failed` with its
 * errors and creates no cargo, as OpenAI does; a good file's cargo are created in one transaction.
 */
import { Type } from 'typebox';
import { authOf } from '../../http/auth.js';
import type { TypedScope } from '../../http/typed-scope.js';
import { compatFileChunks, findCompatFile } from '../../store/compat/files.js';
import { BatchIntake } from '../batch-intake.js';
import type { CompatDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { isCompatId, newCompatId } from '../ids.js';
import { linesOfChunks, readBatchLines } from './batch-lines.js';
import { batchView, findBatch } from './batch-view.js';
import { CHAT_COMPLETIONS } from './chat-request.js';
import { COMPLETION_WINDOW } from './objects.js';
import { BATCH_TAGS, BatchSchema, COMMON_ERRORS, errorAnswer, SECURITY } from './schemas.js';

const CreateBody = Type.Object(
  {
    input_file_id: Type.String({ description: 'A file uploaded with purpose `batch`.' }),
    endpoint: Type.Literal(CHAT_COMPLETIONS),
    completion_window: Type.Literal(COMPLETION_WINDOW),
    metadata: Type.Optional(
      Type.Union([
        Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16 }),
        Type.Null(),
      ]),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        input_file_id: 'file-01jd5q3k8m9x2v4w6y8z0a1b2c',
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { job: 'nightly' },
      },
    ],
  },
);

/** The chunks of a file, counting the bytes read and saying whether the reading reached the end. */
function countedChunks(chunks: AsyncIterable<Buffer>): AsyncIterable<Buffer> & { bytes(): number; ended(): boolean } {
  let bytes = 0;
  let ended = false;
  return {
    bytes: () => bytes,
    ended: () => ended,
    async *[Symbol.asyncIterator]() {
      for await (const chunk of chunks) {
        bytes += chunk.length;
        yield chunk;
      }
      ended = true;
    },
  };
}

export function registerCreateBatch(app: TypedScope, deps: CompatDeps): void {
  app.post(
    '/v1/batches',
    {
      schema: {
        summary: 'Create a batch',
        description:
          "OpenAI's Batch create over `/v1/chat/completions`: each line of the input file becomes one cargo of the project, routed by its own `body.model` (any model of GET /models: one batch may mix models and providers), translated into barge's params (system and developer messages → `system`, `max_completion_tokens` or `max_tokens` → `max_tokens`, default 1024, `stop` → `stop_sequences`, `temperature` and `top_p` kept) and checked as POST /cargo/load checks a body. A bad line (what barge cannot honour: `n` other than 1, tools, `response_format`, `logprobs`, audio or image parts; or what POST /cargo/load refuses) makes the batch `failed` with `errors.data[]` naming the 1-based line and creates no cargo. At most 50,000 lines.",
        tags: BATCH_TAGS,
        security: SECURITY,
        body: CreateBody,
        response: {
          200: BatchSchema,
          400: errorAnswer(
            'The input file is not a batch file of this project, or the body is invalid.',
            "Invalid 'input_file_id': 'file-01jd5q3k8m9x2v4w6y8z0a1b2c'.",
            'input_file_id',
            'invalid_batch_body',
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const { input_file_id: inputFileId, metadata } = request.body;
      const file = isCompatId('file', inputFileId)
        ? await findCompatFile(deps.database, { projectId: auth.projectId, id: inputFileId })
        : undefined;
      if (!file) throw compatErrors.invalidBody(`Invalid 'input_file_id': '${inputFileId}'.`, 'input_file_id');
      if (file.purpose !== 'batch') {
        throw compatErrors.invalidBody("The input file must have purpose 'batch'.", 'input_file_id');
      }
      const id = newCompatId('batch', deps.clock.now());
      const intake = await BatchIntake.begin({ ...deps.intake, log: request.log }, auth, {
        id,
        api: 'openai',
        inputFileId,
        metadata: metadata == null ? null : JSON.stringify(metadata),
      });
      try {
        const chunks = countedChunks(compatFileChunks(deps.database, file.id));
        const errors = await readBatchLines(linesOfChunks(chunks, deps.maxRequestBytes), intake, CHAT_COMPLETIONS, {
          maxLineBytes: deps.maxRequestBytes,
          maxLines: deps.limits.fileLines,
        });
        // A file read to its end must be as long as it was stored (a chunk missing: refused).
        if (chunks.ended() && chunks.bytes() !== Number(file.bytes)) {
          throw compatErrors.invalidBody(
            `The input file is incomplete: ${chunks.bytes()} of its ${file.bytes} bytes could be read.`,
            'input_file_id',
          );
        }
        if (errors.length > 0) await intake.fail(JSON.stringify(errors));
        else await intake.publish();
      } catch (err) {
        await intake.abandon();
        throw err;
      }
      return batchView(deps, request, await findBatch(deps, request, id));
    },
  );
}
