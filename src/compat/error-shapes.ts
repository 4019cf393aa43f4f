/**
 * barge's errors in the shape of the API being spoken, with the status codes that API uses
 * (decisions.md, "Provider-compatible batch endpoints"; providers.md §1.8): Anthropic's
 * `{"type": "error", "error": {"type", "message"}}`, OpenAI's `{"error": {"message", "type",
 * "param", "code"}}`. The catalogue error's message is kept; headers (Retry-After) go along. Pure.
 */
import { ApiError } from '../domain/errors.js';

/** A message or field name may quote what a tenant sent (a key, a custom_id): it is cut at this many characters. */
export const MAX_QUOTED_TEXT = 300;

/** `text` cut at `max` characters, marked with an ellipsis when it was. */
export function cutText(text: string, max = MAX_QUOTED_TEXT): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A refusal of the provider-compatible endpoints themselves (a batch body, a request of a batch, a
 * batch or file not found): the status, a stable code (logged), the message in the API's words,
 * and the field it is about (OpenAI's `param`). Failures shared with the rest of the API (a key, a
 * rate limit, a budget) are the catalogue's ApiErrors, shaped the same way.
 */
export class CompatError extends ApiError {
  constructor(statusCode: number, code: string, text: string, param?: string) {
    const message = cutText(text);
    super(code, statusCode, message, param === undefined ? {} : { errors: [{ path: cutText(param), message }] });
    this.name = 'CompatError';
  }
}

export const compatErrors = {
  messageBatchNotFound: (id: string) =>
    new CompatError(404, 'message_batch_not_found', `message_batch ${id} not found`),
  batchNotFound: (id: string) => new CompatError(404, 'batch_not_found', `No batch found with id '${id}'.`, 'batch_id'),
  fileNotFound: (id: string) => new CompatError(404, 'file_not_found', `No such File object: ${id}`, 'file_id'),
  resultsNotReady: (id: string, status: string) =>
    new CompatError(
      404,
      'results_not_ready',
      `The results of message_batch ${id} are not available yet: it is ${status}.`,
    ),
  deleteNotEnded: (id: string) =>
    new CompatError(
      400,
      'batch_not_ended',
      `message_batch ${id} cannot be deleted while it is processing; cancel it and wait until it has ended.`,
    ),
  cannotCancel: (id: string, status: string) =>
    new CompatError(400, 'cannot_cancel_batch', `Cannot cancel batch ${id}: its status is '${status}'.`),
  invalidBody: (message: string, param?: string) => new CompatError(400, 'invalid_batch_body', message, param),
  tooLarge: (message: string, param?: string) => new CompatError(413, 'batch_body_too_large', message, param),
  /** A request of a batch refused as POST /cargo/load refuses a body (400 invalid, 403 model not allowed, 402 unpriced). */
  requestRefused: (statusCode: 400 | 402 | 403, code: string, message: string) =>
    new CompatError(statusCode, code, message),
};

export interface ShapedError {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The catalogue's message, with the request id of a 500 (which the other shapes have no field for). */
function messageOf(error: ApiError): string {
  const text = typeof error.detail === 'string' ? error.detail : error.detail.message;
  return error.extra.requestId === undefined ? text : `${text} (request id ${error.extra.requestId})`;
}

/** A key missing or refused: the message names both ways these routes take it. */
const KEY_MESSAGES: Record<string, string> = {
  missing_api_key: 'Missing API key: send the project key as x-api-key or Authorization: Bearer.',
  invalid_api_key_format: 'Invalid API key format: a barge project key (barge_sk_…) is expected.',
};

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** Anthropic's shape; a 503 (busy, short of storage, database away) is Anthropic's 529 `overloaded_error`. */
export function anthropicError(error: ApiError): ShapedError {
  const statusCode = error.statusCode === 503 ? 529 : error.statusCode;
  const type = ANTHROPIC_TYPES[statusCode] ?? (statusCode >= 500 ? 'api_error' : 'invalid_request_error');
  return {
    statusCode,
    headers: error.extra.headers ?? {},
    body: { type: 'error', error: { type, message: KEY_MESSAGES[error.code] ?? messageOf(error) } },
  };
}

/**
 * OpenAI's shape: a refused key is `invalid_api_key`, a rate limit `rate_limit_exceeded` (type
 * `requests`), a spend budget OpenAI's quota answer (429 `insufficient_quota`); `param` names the
 * first invalid field of a 400 (`metadata`, `limit`).
 */
export function openAIError(error: ApiError): ShapedError {
  const headers = error.extra.headers ?? {};
  const message = KEY_MESSAGES[error.code] ?? messageOf(error);
  const first = error.extra.errors?.[0];
  const param = first ? first.path.replace(/^\//, '').replaceAll('/', '.') || null : null;
  const shaped = (statusCode: number, type: string, code: string | null) => ({
    statusCode,
    headers,
    body: { error: { message, type, param, code } },
  });
  if (error.statusCode === 401) return shaped(401, 'invalid_request_error', 'invalid_api_key');
  if (error.statusCode === 402) return shaped(429, 'insufficient_quota', 'insufficient_quota');
  if (error.code === 'rate_limited') return shaped(429, 'requests', 'rate_limit_exceeded');
  if (error.statusCode >= 500) return shaped(error.statusCode, 'server_error', error.code);
  return shaped(error.statusCode, 'invalid_request_error', error.code);
}

/**
 * The chunks of a request body; the body failing (the client went away, a multipart form cut
 * short) is a 400 about the body, not a server error. Errors of the caller's own work between
 * chunks pass as they are.
 */
export async function* bodyChunks<T>(body: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = body[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<T>;
    try {
      next = await iterator.next();
    } catch (err) {
      if (err instanceof ApiError || (err as { statusCode?: number }).statusCode !== undefined) throw err;
      throw compatErrors.invalidBody(
        `The request body could not be read whole: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (next.done) return;
    yield next.value;
  }
}
