/**
 * Deletes a connection (of any project, or of the project named only); its pending deliveries
 * fail at once with connection_not_found, in the same transaction (one whose attempt is in flight
 * fails as soon as that attempt ends, unless it delivered).
 */
import { deleteConnection as removeConnection } from '../store/admin/connections.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function deleteConnection(
  deps: Pick<OperationDeps, 'database' | 'clock'>,
  input: { connectionId: string; slug?: string },
): Promise<Result<{ connectionId: string }>> {
  let projectId: string | undefined;
  if (input.slug !== undefined) {
    const project = await findProjectBySlug(deps.database, input.slug);
    if (!project) return refuse(refusals.projectNotFound(input.slug));
    projectId = project.id;
  }
  const deleted = await removeConnection(deps.database, input.connectionId, deps.clock.now(), projectId);
  return deleted
    ? succeed({ connectionId: input.connectionId })
    : refuse(refusals.connectionNotFound(input.connectionId));
}
