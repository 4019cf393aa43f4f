/** Stops a running bulk recovery after the chunk under way; what it redelivered stays. Refused once it has completed. */
import { findProjectBySlug } from '../store/admin/projects.js';
import { type Recovery, cancelRecovery as stopRecovery } from '../store/recoveries/recoveries.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function cancelRecovery(
  deps: OperationDeps,
  input: { slug: string; recoveryId: string },
): Promise<Result<Recovery>> {
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  const canceled = await stopRecovery(deps.database, {
    projectId: project.id,
    id: input.recoveryId,
    now: deps.clock.now(),
  });
  if (canceled === 'not_found') return refuse(refusals.recoveryNotFound(input.recoveryId));
  if (canceled === 'finished') return refuse(refusals.recoveryFinished(input.recoveryId));
  return succeed(canceled);
}
