/**
 * Deactivates or reactivates a project. A deactivated project's keys answer 403 from the next
 * request on, in every API process; no data is lost.
 */
import { type Project, setProjectActive as updateProjectActive } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function setProjectActive(
  deps: OperationDeps,
  input: { slug: string; active: boolean },
): Promise<Result<Project>> {
  const updated = await updateProjectActive(deps.database, input.slug, input.active, deps.clock.now());
  return updated ? succeed(updated) : refuse(refusals.projectNotFound(input.slug));
}
