/** The client's one error class: an HTTP refusal, or no answer at all (status 0). */

export interface FieldError {
  path: string;
  message: string;
}

export class BargeError extends Error {
  /** The HTTP status; 0 when the service gave no answer (unreachable, connection lost, timed out). */
  readonly status: number;
  /** The body's `detail`: a text, or an object `{error, message, ...}` (409, 410, 422). */
  readonly detail: unknown;
  /** `detail.error` of an object detail (`result_not_ready`, `cannot_cancel`, ...); else null. */
  readonly code: string | null;
  /** Every invalid field of a 400 about the body or the query. */
  readonly errors: FieldError[];
  /** What the answer's Retry-After asked for, in milliseconds; null when it had none. */
  readonly retryAfterMs: number | null;

  constructor(
    status: number,
    detail: unknown,
    options: { errors?: FieldError[]; retryAfterMs?: number | null; cause?: unknown } = {},
  ) {
    super(messageOf(status, detail), { cause: options.cause });
    this.name = 'BargeError';
    this.status = status;
    this.detail = detail;
    this.code = codeOf(detail);
    this.errors = options.errors ?? [];
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}

function codeOf(detail: unknown): string | null {
  if (typeof detail !== 'object' || detail === null) return null;
  const { error } = detail as { error?: unknown };
  return typeof error === 'string' ? error : null;
}

function messageOf(status: number, detail: unknown): string {
  const text =
    typeof detail === 'string'
      ? detail
      : typeof (detail as { message?: unknown } | null)?.message === 'string'
        ? (detail as { message: string }).message
        : JSON.stringify(detail);
  return status === 0 ? text : `${status}: ${text}`;
}
