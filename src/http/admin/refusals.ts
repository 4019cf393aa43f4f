/** How the admin API answers an operation's refusal, and the rule that a project-limited token sees one project. */
import { errors } from '../../domain/errors.js';
import { type OperationError, refusals } from '../../operations/operation.js';
import type { AdminCaller } from './auth.js';

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A refused input is a 400 naming its path in the body (`paths` maps the operation's input names
 * to it; by default `/<snake_case name>`); a missing thing 404; a taken slug 409; anything else 422.
 */
export function refusalError(error: OperationError, paths: Record<string, string> = {}) {
  if (error.input) {
    const { name, value, problem } = error.input;
    const path = paths[name] ?? `/${snakeCase(name)}`;
    return errors.invalidBody([{ path, message: `'${value}': ${problem ?? error.message}` }]);
  }
  const message = `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
  if (error.code.endsWith('_not_found')) return errors.adminRefusal(error.code, 404, message);
  if (error.code === 'slug_taken') return errors.adminRefusal(error.code, 409, message);
  return errors.adminRefusal(error.code, 422, message);
}

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
  paths?: Record<string, string>,
): T {
  if (!result.ok) throw refusalError(result.error, paths);
  return result.value;
}
