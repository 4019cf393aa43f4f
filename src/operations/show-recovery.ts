/** One bulk recovery of a project, with its progress. */
import { findProjectBySlug } from '../store/admin/projects.js';
import { findRecovery, type Recovery } from '../store/recoveries/recoveries.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function showRecovery(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug: string; recoveryId: string },
): Promise<Result<Recovery>> {
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  const recovery = await findRecovery(deps.database, project.id, input.recoveryId);
  return recovery ? succeed(recovery) : refuse(refusals.recoveryNotFound(input.recoveryId));
}
