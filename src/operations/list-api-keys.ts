/** Lists a project's API keys: their prefixes and standing, never the keys themselves. */
import { type ApiKey, listApiKeys as readApiKeys } from '../store/admin/api-keys.js';
import { findProjectBySlug, type Project } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export type { ApiKey, Project };

export async function listApiKeys(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug: string },
): Promise<Result<{ project: Project; keys: ApiKey[] }>> {
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  return succeed({ project, keys: await readApiKeys(deps.database, project.id) });
}
