/**
 * The error catalogue: every client-visible failure has a stable `code` (snake_case; for logs,
 * metrics and the server side, never in the body), an HTTP status and a `detail` (a string, or an
 * object `{error, message, ...}` for the structured 402/403/409/410/422 errors, whose `error` is the code).
 * One function in src/http/errors.ts (`errorResponse`) turns these into responses; the bodies are
 * the interface document's and do not change with the code.
 */
import { type CargoStatus, statusDescription } from './lifecycle.js';

export interface FieldError {
  path: string;
  message: string;
}

export type ErrorDetail = string | ({ error: string; message: string } & Record<string, unknown>);

export interface ErrorExtra {
  /** Every invalid field of a 400 body, sent as `errors`. */
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Sent as `request_id` (500s only), so the answer can be matched to its log line. */
  requestId?: string;
}

export class ApiError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    readonly statusCode: number,
    readonly detail: ErrorDetail,
    readonly extra: ErrorExtra = {},
  ) {
    super(typeof detail === 'string' ? detail : detail.message);
    this.name = 'ApiError';
  }
}

/** A structured error: its `detail.error` is its code. */
function structured<Code extends string>(
  code: Code,
  statusCode: number,
  message: string,
  fields: Record<string, unknown> = {},
): ApiError<Code> {
  return new ApiError(code, statusCode, { error: code, message, ...fields });
}

export const errors = {
  // Authentication, in the order it is checked (src/http/auth.ts).
  missingApiKey: () => new ApiError('missing_api_key', 401, 'Missing API key. Include the X-API-Key header.'),
  invalidKeyFormat: () => new ApiError('invalid_api_key_format', 401, 'Invalid API key format.'),
  invalidApiKey: () => new ApiError('invalid_api_key', 401, 'Invalid API key.'),
  expiredApiKey: () => new ApiError('expired_api_key', 401, 'API key has expired.'),
  projectInactive: () => new ApiError('project_inactive', 403, 'Project is inactive.'),
  // The admin API's bearer tokens (src/http/admin/auth.ts).
  missingAdminToken: () =>
    new ApiError(
      'missing_admin_token',
      401,
      'Missing admin token. Include the header Authorization: Bearer barge_at_….',
    ),
  invalidAdminTokenFormat: () =>
    new ApiError(
      'invalid_admin_token_format',
      401,
      'Invalid admin token format: use Authorization: Bearer barge_at_….',
    ),
  /** Signing in to the dashboard with something that is not an admin token at all (a truncated paste). */
  malformedSignInToken: () =>
    new ApiError(
      'malformed_sign_in_token',
      401,
      'That is not an admin token: one is barge_at_ followed by 32 letters and digits.',
    ),
  /** Unknown or revoked: the answer does not tell which. */
  invalidAdminToken: () => new ApiError('invalid_admin_token', 401, 'Invalid admin token.'),
  /** The dashboard's session cookie names no live session (src/http/admin/auth.ts). */
  sessionEnded: () =>
    new ApiError(
      'session_ended',
      401,
      'Your dashboard session has ended (signed out, idle or past its lifetime, or its admin token was revoked). Sign in again.',
    ),
  /** A state-changing request carried the session cookie but did not come from the dashboard's own pages. */
  crossSiteRequest: (reason: string) =>
    new ApiError(
      'cross_site_request',
      403,
      `Cross-site request refused: ${reason}. The dashboard's session cookie is accepted only from the dashboard's own pages; a script should send Authorization: Bearer barge_at_… instead.`,
    ),
  /** `what` the token may not do: creating a project, or seeing what is every project's. */
  allProjectsTokenRequired: (what: 'creating a project' | 'this' = 'creating a project') =>
    new ApiError(
      'all_projects_token_required',
      403,
      `This admin token is limited to one project; ${what} needs an all-projects token.`,
    ),
  /**
   * An operation's refusal (src/operations/operation.ts) answered by the admin API under the
   * operation's code: structured on a 409, 422 or 429 (with its fields; a 429 with Retry-After),
   * as the catalogue's others; a text on a 404.
   */
  adminRefusal: (
    code: string,
    statusCode: 404 | 409 | 422 | 429,
    message: string,
    extra: { fields?: Record<string, unknown>; retryAfterSeconds?: number } = {},
  ) => {
    if (statusCode === 404) return new ApiError(code, statusCode, message);
    const error = structured(code, statusCode, message, extra.fields);
    if (extra.retryAfterSeconds === undefined) return error;
    return new ApiError(code, statusCode, error.detail, {
      headers: { 'retry-after': String(extra.retryAfterSeconds) },
    });
  },
  metricsUnauthorized: () =>
    new ApiError('metrics_unauthorized', 401, 'Metrics need the token: Authorization: Bearer <BARGE_METRICS_TOKEN>.'),
  /** Too many failed authentications from one client address (src/http/auth-failures.ts). */
  tooManyFailedAuthentications: (retryAfterSeconds: number) =>
    new ApiError(
      'auth_failures_limited',
      429,
      'Too many requests without a valid API key from this address; retry later.',
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    ),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError('rate_limited', 429, 'Rate limit exceeded', {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),

  // The project's storage budget and the service's storage (src/http/storage-budget.ts, disk-guard.ts).
  dailyByteBudgetExceeded: (budgetBytes: number, retryAfterSeconds: number) =>
    new ApiError(
      'daily_byte_budget_exceeded',
      429,
      `This project has reached its storage budget of ${budgetBytes} bytes accepted per day (UTC); it is renewed at midnight UTC.`,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    ),
  heldByteBudgetExceeded: (budgetBytes: number, retryAfterSeconds: number) =>
    new ApiError(
      'held_byte_budget_exceeded',
      429,
      `This project holds its storage budget of ${budgetBytes} bytes (requests and results not yet purged); new cargo are accepted again as stored results expire.`,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    ),
  storageFull: (retryAfterSeconds: number) =>
    new ApiError('storage_full', 503, 'The service is low on storage and accepts no new cargo for now; retry later.', {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),

  // The request body.
  /** Names the first MAX_REPORTED_ERRORS problems, and says how many more there were. */
  invalidBody: (fieldErrors: FieldError[]) =>
    new ApiError('invalid_body', 400, summarize('Invalid request body', fieldErrors), {
      errors: fieldErrors.slice(0, MAX_REPORTED_ERRORS),
    }),
  /** The query string: each path is a parameter's name. */
  invalidQuery: (fieldErrors: FieldError[]) =>
    new ApiError('invalid_query', 400, summarize('Invalid query', fieldErrors), {
      errors: fieldErrors.slice(0, MAX_REPORTED_ERRORS),
    }),
  /** The body as a whole (path `""`) is not JSON. */
  malformedJson: (why: string) =>
    new ApiError('malformed_json', 400, `Request body is not valid JSON: ${why}`, {
      errors: [{ path: '', message: `is not valid JSON: ${why}` }],
    }),
  forbiddenJsonKey: (key: '__proto__' | 'constructor.prototype', at: string) =>
    new ApiError(
      'forbidden_json_key',
      400,
      `Request body must not contain a ${key === '__proto__' ? '"__proto__" key' : '"constructor" key holding a "prototype" key'} (found in ${at || 'the top-level object'}; refused to protect against prototype pollution).`,
      {
        errors: [
          {
            path: `${at}/${key === '__proto__' ? '__proto__' : 'constructor/prototype'}`,
            message: 'is refused, to protect against prototype pollution',
          },
        ],
      },
    ),
  unsupportedMediaType: (type: string) =>
    new ApiError(
      'unsupported_media_type',
      415,
      type
        ? `Unsupported Content-Type '${type}'. Send application/json.`
        : 'Missing Content-Type. Send application/json.',
    ),
  bodyTooLarge: (limit: number) =>
    new ApiError('body_too_large', 413, `Request body is larger than the limit of ${limit} bytes.`),
  invalidContentEncoding: (coding: string, why: string) =>
    new ApiError(
      'invalid_content_encoding',
      400,
      `Request body is not valid ${coding} although Content-Encoding says so: ${why}.`,
      { errors: [{ path: '', message: `is not valid ${coding} although Content-Encoding says so: ${why}` }] },
    ),
  unsupportedContentEncoding: (coding: string) =>
    new ApiError(
      'unsupported_content_encoding',
      415,
      `Unsupported Content-Encoding '${coding}'. Send gzip, deflate or identity.`,
    ),

  // The delivery target of POST /cargo/load (src/http/routes/delivery-target.ts).
  connectionNotFound: (connectionId: string) =>
    structured('connection_not_found', 422, `No connection '${connectionId}' in this project.`),
  invalidKeyPrefix: (keyPrefix: string, problem: string) =>
    structured('invalid_key_prefix', 422, `key_prefix '${keyPrefix}' ${problem}.`),
  /** `target` names it, e.g. `Bucket 'arn:aws:s3:::x'`, `Target 'arn:aws:sqs:…'`. */
  targetNotAllowed: (target: string, connectionId: string) =>
    structured('target_not_allowed', 422, `${target} is not on the allow-list of connection '${connectionId}'.`),

  // A cargo and its result.
  cargoNotFound: () => new ApiError('cargo_not_found', 404, 'Cargo not found'),
  /** The cargo has no result yet (pending, batched, processing): where it is. */
  resultNotReady: (cargoId: string, status: CargoStatus) =>
    structured('result_not_ready', 409, 'The result is not ready yet.', {
      cargo_id: cargoId,
      status,
      status_description: statusDescription(status),
    }),
  /** The result was purged after result_ttl_seconds; `status` is the cargo's last. */
  resultExpired: (cargoId: string, status: CargoStatus) =>
    structured('result_expired', 410, 'The result has expired and was purged.', { cargo_id: cargoId, status }),

  /** Processing or finished, or batched in a batch whose submission has begun: too late to cancel. */
  cannotCancel: (cargoId: string, status: CargoStatus) =>
    structured(
      'cannot_cancel',
      409,
      status === 'batched'
        ? 'The cargo cannot be canceled: its batch is being submitted to the provider.'
        : `The cargo cannot be canceled: it is ${status}. Only pending or batched cargo can be.`,
      { cargo_id: cargoId, status },
    ),

  // Idempotency-Key on POST /cargo/load.
  invalidIdempotencyKey: () =>
    new ApiError(
      'invalid_idempotency_key',
      400,
      'Invalid Idempotency-Key header: use 1 to 255 printable ASCII characters.',
      { errors: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }] },
    ),
  idempotencyKeyReused: () =>
    structured(
      'idempotency_key_reused',
      422,
      'This Idempotency-Key was used in the last 24 hours with a different request body; use a new key for a new request.',
    ),

  // Model policy and spend budgets (domain/model-policy.ts, domain/spend.ts).
  modelNotAllowed: (model: string) =>
    structured('model_not_allowed', 403, `This project may not use the model '${model}'.`, { model }),
  budgetExceeded: (spend: { period: 'month' | 'day'; budgetUsd: number; spentUsd: number; reservedUsd: number }) =>
    structured(
      'budget_exceeded',
      402,
      `This cargo would take the project past its ${spend.period === 'month' ? 'monthly (UTC calendar month)' : 'daily (UTC day)'} budget of ${spend.budgetUsd} USD (spent ${spend.spentUsd} USD, reserved by unfinished cargo ${spend.reservedUsd} USD).`,
      {
        period: spend.period,
        budget_usd: spend.budgetUsd,
        spent_usd: spend.spentUsd,
        reserved_usd: spend.reservedUsd,
      },
    ),
  unpricedModel: (model: string) =>
    structured(
      'unpriced_model',
      402,
      `The model '${model}' has no known prices, and this project has a spend budget: it cannot be submitted.`,
      { model },
    ),

  // Routing.
  routeNotFound: (method: string, url: string) =>
    new ApiError('route_not_found', 404, `Route ${method} ${url} not found.`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ApiError('method_not_allowed', 405, `Method ${method} is not allowed here. Allowed: ${allowed.join(', ')}.`, {
      headers: { allow: allowed.join(', ') },
    }),
  badPathEncoding: () =>
    new ApiError('bad_path_encoding', 400, 'The request path is not valid: it contains malformed percent-encoding.'),
  pathSegmentTooLong: (limit: number) =>
    new ApiError(
      'path_segment_too_long',
      414,
      `A path segment (such as a cargo id) is longer than the limit of ${limit} characters.`,
    ),

  // The raw connection: requests Node's HTTP parser refuses, or that time out.
  malformedHttpRequest: (reason: string) =>
    new ApiError('malformed_http_request', 400, `Malformed HTTP request: ${reason}.`),
  headersTooLarge: (limit: number) =>
    new ApiError('headers_too_large', 431, `The request line and headers are larger than the limit of ${limit} bytes.`),
  chunkExtensionsTooLarge: () =>
    new ApiError('chunk_extensions_too_large', 413, 'The chunk extensions of the request body are too large.'),
  requestTimeout: () => new ApiError('request_timeout', 408, 'The request was not received in time.'),
  /**
   * A 4xx that Fastify or a plugin raised and that has no entry of its own (its message is kept;
   * the original error, with its FST_ code, goes to the log).
   */
  requestRejected: (statusCode: number, message: string) => new ApiError('request_rejected', statusCode, message),

  // The server's side.
  databaseUnreachable: () => new ApiError('database_unreachable', 503, 'Database is not reachable.'),
  /** Request bodies in flight have reached their byte budget: try again in a moment. */
  serverBusy: (retryAfterSeconds: number) =>
    new ApiError('server_busy', 503, 'The service is receiving as much as it can hold; retry shortly.', {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  /** A bug: logged in full, answered with the request id and never a stack trace. */
  internalError: (requestId: string) => new ApiError('internal_error', 500, 'Internal server error', { requestId }),
};

/** Every code of the catalogue. */
export type ErrorCode = ReturnType<(typeof errors)[keyof typeof errors]>['code'];

/** A 400 lists at most this many problems (a body may have millions): its detail counts the rest. */
export const MAX_REPORTED_ERRORS = 50;

function summarize(what: string, fieldErrors: FieldError[]): string {
  const first = fieldErrors[0];
  if (!first) return `${what}.`;
  const more = fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : '';
  return `${what}: ${first.path ? `${first.path} ` : ''}${first.message}${more}.`;
}
