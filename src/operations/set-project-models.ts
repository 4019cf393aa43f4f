/**
 * Sets a project's model allowlist: globs (`*`, `?`) matched against the catalog id, or against
 * the whole qualified name of a model the catalog does not list; null allows every model (the
 * default). Every API process applies it from the project's next request (the auth change counter).
 */
import { modelPatternProblem } from '../domain/model-policy.js';
import type { Project } from '../store/admin/projects.js';
import { type OperationDeps, type OperationError, type Result, refusals, refuse } from './operation.js';
import { applyProjectSettings } from './project-settings.js';

/** Patterns a project may list, at most: the check runs them on every submit. */
const MAX_PATTERNS = 100;

export async function setProjectModels(
  deps: OperationDeps,
  input: { slug: string; allow: string[] | null },
): Promise<Result<Project>> {
  const refused = modelPatternsRefusal(input.allow);
  if (refused) return refuse(refused);
  return applyProjectSettings(deps, input.slug, { allowedModels: allowlistStored(input.allow) });
}

/** An allowlist as stored: each pattern once. */
export const allowlistStored = (allow: string[] | null) => (allow === null ? null : [...new Set(allow)]);

/** Why an allowlist is refused, or null when it is fine (update-project checks it before any change). */
export function modelPatternsRefusal(allow: string[] | null): OperationError | null {
  if (allow === null) return null;
  if (allow.length === 0) return refusals.invalidModelPattern('', 'give at least one pattern');
  if (allow.length > MAX_PATTERNS) {
    return refusals.invalidModelPattern(allow[MAX_PATTERNS] ?? '', `at most ${MAX_PATTERNS} patterns`);
  }
  for (const pattern of allow) {
    const problem = modelPatternProblem(pattern);
    if (problem !== null) return refusals.invalidModelPattern(pattern, problem);
  }
  return null;
}
