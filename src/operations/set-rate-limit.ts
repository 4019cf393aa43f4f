/**
 * Sets a project's rate limit: requests per window (BARGE_RATE_LIMIT_WINDOW_MS), or with null the
 * configured default (BARGE_RATE_LIMIT_MAX). Every API process applies it from the project's next
 * request (the auth change counter).
 */
import type { Project } from '../store/admin/projects.js';
import { type OperationDeps, type OperationError, type Result, refusals, refuse } from './operation.js';
import { applyProjectSettings } from './project-settings.js';

export async function setRateLimit(
  deps: OperationDeps,
  input: { slug: string; max: number | null },
): Promise<Result<Project>> {
  const refused = rateLimitRefusal(input.max);
  return refused ? refuse(refused) : applyProjectSettings(deps, input.slug, { rateLimitMax: input.max });
}

/** Why a rate limit is refused, or null when it is fine. */
export function rateLimitRefusal(max: number | null): OperationError | null {
  return max === null || (Number.isSafeInteger(max) && max >= 1) ? null : refusals.invalidRateLimit(String(max));
}
