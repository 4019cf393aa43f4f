/** The schemas of barge's OpenAI Files and Batch routes (/openapi.json, tags `openai: files`, `openai: batches`), with examples. */
import { Type } from 'typebox';
import { compatErrors } from '../error-shapes.js';
import { isCompatId } from '../ids.js';

export const FILE_TAGS = ['openai: files'];
export const BATCH_TAGS = ['openai: batches'];
export const SECURITY: { [scheme: string]: string[] }[] = [{ apiKey: [] }, { bearerApiKey: [] }];

const MaybeSeconds = Type.Union([Type.Integer(), Type.Null()]);

export const EXAMPLE_FILE = {
  id: 'file-01jd5q3k8m9x2v4w6y8z0a1b2c',
  object: 'file',
  bytes: 1283,
  created_at: 1795428000,
  expires_at: 1798020000,
  filename: 'requests.jsonl',
  purpose: 'batch',
  status: 'processed',
};

export const FileSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('file'),
    bytes: Type.Integer(),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    expires_at: Type.Integer({ description: 'Unix seconds: deleted then (30 days after it was made).' }),
    filename: Type.String(),
    purpose: Type.Union([Type.Literal('batch'), Type.Literal('batch_output')]),
    status: Type.Literal('processed'),
  },
  { examples: [EXAMPLE_FILE] },
);

export const EXAMPLE_BATCH = {
  id: 'batch_01jd5q3k8m9x2v4w6y8z0a1b2d',
  object: 'batch',
  endpoint: '/v1/chat/completions',
  input_file_id: 'file-01jd5q3k8m9x2v4w6y8z0a1b2c',
  completion_window: '24h',
  status: 'completed',
  output_file_id: 'file-01jd5q9p2n7c3v5x1z9y8w7a6e',
  error_file_id: null,
  created_at: 1795428000,
  in_progress_at: 1795428001,
  completed_at: 1795428250,
  cancelled_at: null,
  failed_at: null,
  expires_at: 1795514400,
  request_counts: { total: 2, completed: 2, failed: 0 },
  metadata: { job: 'nightly' },
  errors: null,
};

export const BatchSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('batch'),
    endpoint: Type.String(),
    input_file_id: Type.String(),
    completion_window: Type.String(),
    status: Type.Union([
      Type.Literal('in_progress'),
      Type.Literal('cancelling'),
      Type.Literal('cancelled'),
      Type.Literal('completed'),
      Type.Literal('failed'),
    ]),
    output_file_id: Type.Union([Type.String(), Type.Null()]),
    error_file_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.Integer(),
    in_progress_at: MaybeSeconds,
    completed_at: MaybeSeconds,
    cancelled_at: MaybeSeconds,
    failed_at: MaybeSeconds,
    expires_at: Type.Integer(),
    request_counts: Type.Object({ total: Type.Integer(), completed: Type.Integer(), failed: Type.Integer() }),
    metadata: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
    errors: Type.Union([
      Type.Object({
        object: Type.Literal('list'),
        data: Type.Array(
          Type.Object({
            code: Type.String(),
            message: Type.String(),
            line: Type.Union([Type.Integer({ description: '1-based' }), Type.Null()]),
            param: Type.Union([Type.String(), Type.Null()]),
          }),
        ),
      }),
      Type.Null(),
    ]),
  },
  { examples: [EXAMPLE_BATCH] },
);

export const ErrorSchema = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.String(),
    param: Type.Union([Type.String(), Type.Null()]),
    code: Type.Union([Type.String(), Type.Null()]),
  }),
});

/** An error answer in OpenAI's shape, with its example. */
export const errorAnswer = (
  description: string,
  message: string,
  param: string | null,
  code: string | null,
  type = 'invalid_request_error',
) => ({
  ...ErrorSchema,
  description,
  examples: [{ error: { message, type, param, code } }],
});

export const COMMON_ERRORS = {
  401: errorAnswer(
    'Missing, malformed, unknown, deactivated or expired key.',
    'Invalid API key.',
    null,
    'invalid_api_key',
  ),
  403: errorAnswer('The project is deactivated.', 'Project is inactive.', null, 'project_inactive'),
  429: errorAnswer(
    'Rate limit (see Retry-After), the storage budget, or the spend budget (`insufficient_quota`).',
    'Rate limit exceeded',
    null,
    'rate_limit_exceeded',
    'requests',
  ),
  500: errorAnswer(
    'A bug; the message carries a request id.',
    'Internal server error (request id 4f1c…)',
    null,
    'internal_error',
    'server_error',
  ),
};

export const FileIdParams = Type.Object({ file_id: Type.String({ examples: ['file-01jd5q3k8m9x2v4w6y8z0a1b2c'] }) });
export const BatchIdParams = Type.Object({ batch_id: Type.String({ examples: ['batch_01jd5q3k8m9x2v4w6y8z0a1b2d'] }) });

export const FILE_NOT_FOUND = {
  404: errorAnswer(
    'No such file in this project.',
    'No such File object: file-01jd5q3k8m9x2v4w6y8z0a1b2c',
    'file_id',
    'file_not_found',
  ),
};
export const BATCH_NOT_FOUND = {
  404: errorAnswer(
    'No such batch in this project.',
    "No batch found with id 'batch_01jd5q3k8m9x2v4w6y8z0a1b2d'.",
    'batch_id',
    'batch_not_found',
  ),
};

/** A cursor page of OpenAI's list endpoints. */
export const pageOf = <T extends ReturnType<typeof Type.Object>>(item: T, example: unknown) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      first_id: Type.Union([Type.String(), Type.Null()]),
      last_id: Type.Union([Type.String(), Type.Null()]),
      has_more: Type.Boolean(),
    },
    {
      examples: [
        {
          object: 'list',
          data: [example],
          first_id: (example as { id: string }).id,
          last_id: (example as { id: string }).id,
          has_more: false,
        },
      ],
    },
  );

/**
 * The cursor of OpenAI's list endpoints: `limit` within its bounds and `after` an id of the
 * listed kind, else a 400 naming the parameter.
 */
export function cursorOf(
  query: { limit?: string; after?: string },
  limits: { default: number; max: number },
  kind: 'batch' | 'file',
): { limit: number; after?: string } {
  const limit = query.limit === undefined ? limits.default : Number(query.limit);
  if (limit < 1 || limit > limits.max) {
    throw compatErrors.invalidBody(`Invalid 'limit': an integer from 1 to ${limits.max} expected.`, 'limit');
  }
  if (query.after === undefined) return { limit };
  if (!isCompatId(kind, query.after)) {
    throw compatErrors.invalidBody(`Invalid 'after': '${query.after}' is not a ${kind} id.`, 'after');
  }
  return { limit, after: query.after };
}

/** A page of OpenAI's list endpoints around its items. */
export function listPage<T extends { id: string }>(data: T[], hasMore: boolean) {
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: hasMore,
  };
}
