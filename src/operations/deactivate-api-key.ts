/**
 * Deactivates an API key. The key is kept (its prefix still identifies it) and every API process
 * answers it 401 from its next request on. With `slug`, the key must be one of that project's
 * (the admin API names keys within their project); another project's is not found.
 */
import { type ApiKey, deactivateApiKey as updateApiKey } from '../store/admin/api-keys.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function deactivateApiKey(
  deps: Pick<OperationDeps, 'database'>,
  input: { keyId: string; slug?: string },
): Promise<Result<ApiKey>> {
  let projectId: string | undefined;
  if (input.slug !== undefined) {
    const project = await findProjectBySlug(deps.database, input.slug);
    if (!project) return refuse(refusals.projectNotFound(input.slug));
    projectId = project.id;
  }
  const updated = await updateApiKey(deps.database, input.keyId, projectId);
  return updated ? succeed(updated) : refuse(refusals.apiKeyNotFound(input.keyId));
}
