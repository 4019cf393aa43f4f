/**
 * Sets a project's rate limit: requests per window (BARGE_RATE_LIMIT_WINDOW_MS), or with null the
 * configured default (BARGE_RATE_LIMIT_MAX). Every API process applies it from the project's next
 * request (the auth change counter).
 */
import { type Project, setProjectRateLimit } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function setRateLimit(
  deps: OperationDeps,
  input: { slug: string; max: number | null },
): Promise<Result<Project>> {
  if (input.max !== null && !(Number.isSafeInteger(input.max) && input.max >= 1)) {
    return refuse(refusals.invalidRateLimit(String(input.max)));
  }
  const project = await setProjectRateLimit(deps.database, input.slug, input.max, deps.clock.now());
  return project ? succeed(project) : refuse(refusals.projectNotFound(input.slug));
}
