/** The schemas of barge's Message Batches routes (/openapi.json, tag `anthropic: message batches`), with examples. */
import { Type } from 'typebox';

export const TAGS = ['anthropic: message batches'];
export const SECURITY: { [scheme: string]: string[] }[] = [{ apiKey: [] }, { bearerApiKey: [] }];

const Time = Type.String({ format: 'date-time' });
const MaybeTime = Type.Union([Time, Type.Null()]);

export const EXAMPLE_BATCH = {
  id: 'msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c',
  type: 'message_batch',
  processing_status: 'ended',
  request_counts: { processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 },
  ended_at: '2026-11-22T10:04:10.000Z',
  created_at: '2026-11-22T10:00:00.000Z',
  expires_at: '2026-11-23T10:00:00.000Z',
  cancel_initiated_at: null,
  archived_at: null,
  results_url: 'https://barge.example.com/v1/messages/batches/msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c/results',
};

export const MessageBatchSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message_batch'),
    processing_status: Type.Union([Type.Literal('in_progress'), Type.Literal('canceling'), Type.Literal('ended')]),
    request_counts: Type.Object({
      processing: Type.Integer(),
      succeeded: Type.Integer(),
      errored: Type.Integer(),
      canceled: Type.Integer(),
      expired: Type.Integer(),
    }),
    ended_at: MaybeTime,
    created_at: Time,
    expires_at: Time,
    cancel_initiated_at: MaybeTime,
    archived_at: Type.Null(),
    results_url: Type.Union([Type.String(), Type.Null()], {
      description:
        'Where the results are, once the batch ended: BARGE_PUBLIC_BASE_URL, else the scheme and Host asked with.',
    }),
  },
  { examples: [EXAMPLE_BATCH] },
);

export const ErrorSchema = Type.Object({
  type: Type.Literal('error'),
  error: Type.Object({ type: Type.String(), message: Type.String() }),
});

/** An error answer in Anthropic's shape, with its example. */
export const errorAnswer = (description: string, type: string, message: string) => ({
  ...ErrorSchema,
  description,
  examples: [{ type: 'error', error: { type, message } }],
});

/** The answers every route of the scope may give. */
export const COMMON_ERRORS = {
  401: errorAnswer(
    'Missing, malformed, unknown, deactivated or expired key.',
    'authentication_error',
    'Invalid API key.',
  ),
  403: errorAnswer('The project is deactivated.', 'permission_error', 'Project is inactive.'),
  429: errorAnswer('Rate limit (see Retry-After).', 'rate_limit_error', 'Rate limit exceeded'),
  500: errorAnswer('A bug; the message carries a request id.', 'api_error', 'Internal server error (request id 4f1c…)'),
};

export const NOT_FOUND = {
  404: errorAnswer(
    'No such batch in this project.',
    'not_found_error',
    'message_batch msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c not found',
  ),
};

export const BatchIdParams = Type.Object({
  message_batch_id: Type.String({ examples: ['msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c'] }),
});
