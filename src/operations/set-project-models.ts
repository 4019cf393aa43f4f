/**
 * Sets a project's model allowlist: globs (`*`, `?`) matched against the catalog id, or against
 * the whole qualified name of a model the catalog does not list; null allows every model (the
 * default). Every API process applies it from the project's next request (the auth change counter).
 */
import { modelPatternProblem } from '../domain/model-policy.js';
import { type Project, setProjectModels as storeProjectModels } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

/** Patterns a project may list, at most: the check runs them on every submit. */
const MAX_PATTERNS = 100;

export async function setProjectModels(
  deps: OperationDeps,
  input: { slug: string; allow: string[] | null },
): Promise<Result<Project>> {
  if (input.allow !== null) {
    if (input.allow.length === 0) return refuse(refusals.invalidModelPattern('', 'give at least one pattern'));
    if (input.allow.length > MAX_PATTERNS) {
      return refuse(refusals.invalidModelPattern(input.allow[MAX_PATTERNS] ?? '', `at most ${MAX_PATTERNS} patterns`));
    }
    for (const pattern of input.allow) {
      const problem = modelPatternProblem(pattern);
      if (problem !== null) return refuse(refusals.invalidModelPattern(pattern, problem));
    }
  }
  const allow = input.allow === null ? null : [...new Set(input.allow)];
  const project = await storeProjectModels(deps.database, input.slug, allow, deps.clock.now());
  return project ? succeed(project) : refuse(refusals.projectNotFound(input.slug));
}
