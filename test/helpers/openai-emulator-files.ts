/**
 * The Files API of the OpenAI emulator (openai-emulator.ts): upload (multipart, `purpose=batch`, a
 * `.jsonl` name, at most 200 MB; lines are not read here, as the real API only reads them when a
 * batch validates), list (`purpose`, `limit` 1–10,000, `order`, `after`), retrieve, download
 * (`/content`, the stored bytes as they are) and delete. The
 * batch part stores its output and error files here too (`purpose: batch_output`).
 */
import { EXTRA_FIELD, type MultipartForm, type Route, randomId } from './emulator-http.js';
import { cursorPage, openAIError } from './openai-emulator-lines.js';

const DAY_S = 24 * 60 * 60;

export interface StoredFile {
  id: string;
  filename: string;
  purpose: string;
  createdAt: number;
  content: Buffer;
  deleted: boolean;
}

export class FileStore {
  private readonly files = new Map<string, StoredFile>();

  constructor(
    /** Unix seconds. */
    private readonly seconds: () => number,
    private readonly maxFileBytes: number,
  ) {}

  store(filename: string, purpose: string, content: Buffer): StoredFile {
    const file = { id: randomId('file-', 22), filename, purpose, createdAt: this.seconds(), content, deleted: false };
    this.files.set(file.id, file);
    return file;
  }

  /** The file, deleted ones included (undefined if it never existed). */
  get(id: string): StoredFile | undefined {
    return this.files.get(id);
  }

  all(): StoredFile[] {
    return [...this.files.values()];
  }

  /** The file, or the API's 404. */
  find(id: string): StoredFile {
    const file = this.files.get(id);
    if (!file || file.deleted) throw openAIError(404, `No such File object: ${id}`, 'id');
    return file;
  }

  /** `GET /v1/files`: the cursor page of files not deleted, newest first unless `order=asc`. */
  private list(query: Record<string, string>) {
    const order = query.order ?? 'desc';
    if (order !== 'asc' && order !== 'desc') {
      throw openAIError(400, `Invalid 'order': 'asc' or 'desc' expected, got ${order}.`, 'order');
    }
    const live = this.all().filter((f) => !f.deleted && (query.purpose === undefined || f.purpose === query.purpose));
    const ordered = order === 'asc' ? live : live.reverse();
    return cursorPage(ordered, query, { defaultLimit: 10_000, maxLimit: 10_000 }, (f) => this.view(f));
  }

  private upload(form: unknown): StoredFile {
    const { fields, files: parts } = (form ?? { fields: {}, files: {} }) as MultipartForm;
    const purpose = fields.purpose;
    if (!purpose) throw openAIError(400, "Missing required parameter: 'purpose'.", 'purpose');
    if (purpose !== 'batch')
      throw openAIError(400, `This emulator takes purpose 'batch' only, not '${purpose}'.`, 'purpose');
    const file = parts.file;
    if (!file) throw openAIError(400, "Missing required parameter: 'file'.", 'file');
    if (!file.filename.endsWith('.jsonl'))
      throw openAIError(400, 'Invalid file format for Batch API. Must be .jsonl', 'file');
    if (file.content.length > this.maxFileBytes) throw openAIError(400, 'File is too large.', 'file');
    return this.store(file.filename, purpose, file.content);
  }

  private view(file: StoredFile) {
    return {
      object: 'file',
      id: file.id,
      purpose: file.purpose,
      filename: file.filename,
      bytes: file.content.length,
      created_at: file.createdAt,
      expires_at: file.createdAt + 30 * DAY_S,
      status: 'processed',
      status_details: null,
      ...EXTRA_FIELD,
    };
  }

  routes(): Route[] {
    return [
      {
        method: 'POST',
        path: /^\/v1\/files$/,
        body: 'multipart',
        handle: ({ body }) => ({ json: this.view(this.upload(body)) }),
      },
      { method: 'GET', path: /^\/v1\/files$/, handle: ({ query }) => ({ json: this.list(query) }) },
      {
        method: 'GET',
        path: /^\/v1\/files\/([^/]+)$/,
        handle: ({ params: [id] }) => ({ json: this.view(this.find(id as string)) }),
      },
      {
        method: 'GET',
        path: /^\/v1\/files\/([^/]+)\/content$/,
        handle: ({ params: [id] }) => ({
          bytes: this.find(id as string).content,
          contentType: 'application/octet-stream',
        }),
      },
      {
        method: 'DELETE',
        path: /^\/v1\/files\/([^/]+)$/,
        body: 'none',
        handle: ({ params: [id] }) => {
          const file = this.find(id as string);
          file.deleted = true;
          return { json: { object: 'file', id: file.id, deleted: true } };
        },
      },
    ];
  }
}
