/**
 * The error catalogue: every client-visible failure has a stable code, an HTTP status and a
 * `detail` (a string, or an object for the structured 409/410/422 errors). One function in
 * src/http/errors.ts turns these into responses.
 */
export interface FieldError {
  path: string;
  message: string;
}

export type ErrorDetail = string | ({ error: string; message: string } & Record<string, unknown>);

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: ErrorDetail,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(typeof detail === 'string' ? detail : detail.message);
    this.name = 'ApiError';
  }
}

export const errors = {
  missingApiKey: () => new ApiError(401, 'Missing API key. Include the X-API-Key header.'),
  invalidKeyFormat: () => new ApiError(401, 'Invalid API key format.'),
  invalidApiKey: () => new ApiError(401, 'Invalid API key.'),
  expiredApiKey: () => new ApiError(401, 'API key has expired.'),
  projectInactive: () => new ApiError(403, 'Project is inactive.'),
  cargoNotFound: () => new ApiError(404, 'Cargo not found'),
  invalidBody: (fieldErrors: FieldError[]) => new ApiError(400, summarize(fieldErrors), { errors: fieldErrors }),
  malformedJson: (why: string) => new ApiError(400, `Request body is not valid JSON: ${why}`),
  unsupportedMediaType: (type: string) =>
    new ApiError(
      415,
      type
        ? `Unsupported Content-Type '${type}'. Send application/json.`
        : 'Missing Content-Type. Send application/json.',
    ),
  bodyTooLarge: (limit: number) => new ApiError(413, `Request body is larger than the limit of ${limit} bytes.`),
  routeNotFound: (method: string, url: string) => new ApiError(404, `Route ${method} ${url} not found.`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ApiError(405, `Method ${method} is not allowed here. Allowed: ${allowed.join(', ')}.`, {
      headers: { allow: allowed.join(', ') },
    }),
  connectionNotFound: (connectionId: string) =>
    new ApiError(422, { error: 'connection_not_found', message: `No connection '${connectionId}' in this project.` }),
  invalidKeyPrefix: (keyPrefix: string, problem: string) =>
    new ApiError(422, { error: 'invalid_key_prefix', message: `key_prefix '${keyPrefix}' ${problem}.` }),
  /** `target` names it, e.g. `Bucket 'arn:aws:s3:::x'`, `Target 'arn:aws:sqs:…'`. */
  targetNotAllowed: (target: string, connectionId: string) =>
    new ApiError(422, {
      error: 'target_not_allowed',
      message: `${target} is not on the allow-list of connection '${connectionId}'.`,
    }),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, 'Rate limit exceeded', {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  forbiddenJsonKey: (key: '__proto__' | 'constructor.prototype', at: string) =>
    new ApiError(
      400,
      `Request body must not contain a ${key === '__proto__' ? '"__proto__" key' : '"constructor" key holding a "prototype" key'} (found in ${at || 'the top-level object'}; refused to protect against prototype pollution).`,
    ),
  invalidContentEncoding: (coding: string, why: string) =>
    new ApiError(400, `Request body is not valid ${coding} although Content-Encoding says so: ${why}.`),
  unsupportedContentEncoding: (coding: string) =>
    new ApiError(415, `Unsupported Content-Encoding '${coding}'. Send gzip, deflate or identity.`),
  badPathEncoding: () => new ApiError(400, 'The request path is not valid: it contains malformed percent-encoding.'),
  pathSegmentTooLong: (limit: number) =>
    new ApiError(414, `A path segment (such as a cargo id) is longer than the limit of ${limit} characters.`),
  malformedHttpRequest: (reason: string) => new ApiError(400, `Malformed HTTP request: ${reason}.`),
  headersTooLarge: (limit: number) =>
    new ApiError(431, `The request line and headers are larger than the limit of ${limit} bytes.`),
  chunkExtensionsTooLarge: () => new ApiError(413, 'The chunk extensions of the request body are too large.'),
  requestTimeout: () => new ApiError(408, 'The request was not received in time.'),
};

function summarize(fieldErrors: FieldError[]): string {
  const first = fieldErrors[0];
  if (!first) return 'Invalid request body.';
  const more = fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : '';
  return `Invalid request body: ${first.path ? `${first.path} ` : ''}${first.message}${more}.`;
}
