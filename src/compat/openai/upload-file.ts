/**
 * POST /v1/files: an OpenAI Batch input file, multipart (`file` and `purpose=batch`), streamed
 * into the database a chunk at a time as it arrives (a 200 MB upload never sits in memory). Its
 * lines are read when a batch is created from it, as OpenAI does.
 */
// Its types add request.parts() and isMultipart() (the plugin is registered in routes.ts).
import type {} from '@fastify/multipart';
import { Type } from 'typebox';
import { authOf } from '../../http/auth.js';
import type { TypedScope } from '../../http/typed-scope.js';
import type { CompatDeps } from '../deps.js';
import { bodyChunks, compatErrors } from '../error-shapes.js';
import { newCompatId } from '../ids.js';
import { fileView, findFile } from './file-view.js';
import { CompatFileWriter } from './file-writer.js';
import { COMMON_ERRORS, errorAnswer, FILE_TAGS, FileSchema, SECURITY } from './schemas.js';

/** The multipart envelope around the file: its parts' headers and the purpose field. */
const ENVELOPE_BYTES = 1024 * 1024;

const UploadForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'The JSONL file (a `.jsonl` name), at most 200 MB.' }),
    purpose: Type.Literal('batch'),
  },
  { examples: [{ file: '(requests.jsonl)', purpose: 'batch' }] },
);

export function registerUploadFile(app: TypedScope, deps: CompatDeps): void {
  app.post(
    '/v1/files',
    {
      // The form is read by the handler (@fastify/multipart, streaming); the schema documents it.
      validatorCompiler: () => () => true,
      schema: {
        summary: 'Upload a Batch input file',
        description:
          "Multipart: `file` (a `.jsonl` file, at most 200 MB) and `purpose` = `batch`. Stored for the project until deleted or 30 days after its upload; it counts against the project's storage budget. Its lines are checked when a batch is created from it.",
        tags: FILE_TAGS,
        security: SECURITY,
        consumes: ['multipart/form-data'],
        body: UploadForm,
        response: {
          200: FileSchema,
          400: errorAnswer(
            'No file, a purpose other than batch, a name not ending in .jsonl, or a file over 200 MB.',
            'File is too large.',
            'file',
            'invalid_file',
          ),
          413: errorAnswer(
            'The request is larger than 200 MB and its envelope.',
            'Request exceeds the maximum size of 210763776 bytes',
            null,
            'batch_body_too_large',
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const declared = Number(request.headers['content-length'] ?? 0);
      const maxFileBytes = deps.limits.fileBytes;
      if (declared > maxFileBytes + ENVELOPE_BYTES) {
        throw compatErrors.tooLarge(`Request exceeds the maximum size of ${maxFileBytes + ENVELOPE_BYTES} bytes`);
      }
      if (!request.isMultipart()) throw compatErrors.invalidBody('Send the file as multipart/form-data.', 'file');
      await deps.intake.storage.disk?.check(declared);
      await deps.intake.storage.budget.check(auth, declared);
      const id = newCompatId('file', deps.clock.now());
      const fields = new Map<string, string>();
      let writer: CompatFileWriter | null = null;
      try {
        for await (const part of bodyChunks(request.parts())) {
          if (part.type === 'field') {
            fields.set(part.fieldname, String(part.value));
            continue;
          }
          if (part.fieldname !== 'file' || writer !== null) {
            part.file.resume();
            throw compatErrors.invalidBody(`Send one file, in the field 'file' (not '${part.fieldname}').`, 'file');
          }
          writer = new CompatFileWriter(deps, {
            id,
            projectId: auth.projectId,
            purpose: 'batch',
            filename: part.filename,
          });
          for await (const chunk of bodyChunks(part.file)) await writer.write(chunk as Buffer);
          // busboy cuts a file at its size limit; a cut file is never stored as if whole.
          if (part.file.truncated) {
            throw compatErrors.invalidBody(`File is too large: at most ${maxFileBytes} bytes.`, 'file');
          }
        }
        checkForm(writer, fields);
        // The budget was checked against the declared length before; the stored size is checked now.
        await deps.intake.storage.disk?.check(writer.bytes);
        await deps.intake.storage.budget.check(auth, writer.bytes);
        await writer.finishUpload();
        deps.intake.storage.budget.accepted(auth.projectId, writer.bytes, deps.clock.now());
      } catch (err) {
        await writer?.abandon();
        if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
          throw compatErrors.invalidBody(`File is too large: at most ${maxFileBytes} bytes.`, 'file');
        }
        throw err;
      }
      return fileView(await findFile(deps, request, id));
    },
  );
}

/** The form as OpenAI's Batch API takes it: a `.jsonl` file and `purpose=batch`, nothing else. */
function checkForm(writer: CompatFileWriter | null, fields: Map<string, string>): asserts writer is CompatFileWriter {
  const purpose = fields.get('purpose');
  if (purpose === undefined) throw compatErrors.invalidBody("Missing required parameter: 'purpose'.", 'purpose');
  if (purpose !== 'batch')
    throw compatErrors.invalidBody(`barge takes purpose 'batch' only, not '${purpose}'.`, 'purpose');
  for (const name of fields.keys()) {
    if (name !== 'purpose') throw compatErrors.invalidBody(`Unrecognized request argument supplied: ${name}`, name);
  }
  if (writer === null) throw compatErrors.invalidBody("Missing required parameter: 'file'.", 'file');
  if (!writer.file.filename.endsWith('.jsonl')) {
    throw compatErrors.invalidBody('Invalid file format for Batch API. Must be .jsonl', 'file');
  }
}
