/** How the admin API answers an operation's refusal, and the rule that a project-limited token sees one project. */
import { errors } from '../../domain/errors.js';
import { type OperationError, type OperationErrorCode, refusals } from '../../operations/operation.js';
import type { AdminCaller } from './auth.js';

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The refusals answered otherwise than 422: a request that does not say what it must (400: about
 * the body as a whole), a state that forbids it now (409), a check run too soon (429). A refused
 * input is always a 400, and a missing thing (`…_not_found`) a 404.
 */
const STATUS: Partial<Record<OperationErrorCode, 400 | 409 | 429>> = {
  invalid_access: 400,
  endpoint_with_role: 400,
  incomplete_credentials: 400,
  invalid_target: 400,
  invalid_window: 400,
  slug_taken: 409,
  result_not_ready: 409,
  result_purged: 409,
  delivery_in_progress: 409,
  recovery_finished: 409,
  check_too_soon: 429,
};

export interface RefusalOptions {
  /** The operation's input names and where they are in the request (by default `/<snake_case name>` in the body). */
  paths?: Record<string, string>;
  /** The inputs came in the query string: a refused one is an invalid query, named by its parameter. */
  query?: boolean;
  /** The clock, for a 429's `next_check_at`. */
  now?: number;
}

/**
 * A refused input is a 400 naming its path in the body (or its parameter in the query); a missing
 * thing 404; a taken slug, a redelivery or cancel the cargo's or recovery's state forbids, 409; a
 * capability check too soon, 429 with Retry-After and `next_check_at`; anything else 422.
 */
export function refusalError(error: OperationError, options: RefusalOptions = {}) {
  if (error.input) {
    const { name, value, problem } = error.input;
    const path = options.paths?.[name] ?? (options.query ? snakeCase(name) : `/${snakeCase(name)}`);
    const fieldError = { path, message: `'${value}': ${problem ?? error.message}` };
    return options.query ? errors.invalidQuery([fieldError]) : errors.invalidBody([fieldError]);
  }
  const message = sentence(error.message);
  if (error.code.endsWith('_not_found')) return errors.adminRefusal(error.code, 404, message);
  const status = STATUS[error.code] ?? 422;
  if (status === 400) return errors.invalidBody([{ path: '', message: error.message }]);
  if (status === 429) {
    const waitMs = error.retryAfterMs ?? 0;
    const nextCheckAt = options.now === undefined ? undefined : new Date(options.now + waitMs).toISOString();
    return errors.adminRefusal(error.code, 429, message, {
      fields: nextCheckAt === undefined ? {} : { next_check_at: nextCheckAt },
      retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    });
  }
  return errors.adminRefusal(error.code, status, message);
}

/** An operation's message as the admin API says it: a sentence. */
export const sentence = (message: string) => `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;

/**
 * Refuses a project a token may not see with exactly the answer an unknown slug gets (404), so a
 * project-limited token learns nothing of the others, not even that they exist.
 */
export function assertProjectVisible(caller: AdminCaller, slug: string): void {
  if (caller.project !== null && caller.project.slug !== slug) throw refusalError(refusals.projectNotFound(slug));
}

/** The operation's value, or its refusal thrown as the answer. */
export function outcome<T>(
  result: { ok: true; value: T } | { ok: false; error: OperationError },
  options?: RefusalOptions,
): T {
  if (!result.ok) throw refusalError(result.error, options);
  return result.value;
}
