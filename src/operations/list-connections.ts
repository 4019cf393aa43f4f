/** Lists a project's delivery connections (their standing; never their credentials). */
import { type Connection, listConnections as readConnections } from '../store/admin/connections.js';
import { findProjectBySlug, type Project } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function listConnections(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug: string },
): Promise<Result<{ project: Project; connections: Connection[] }>> {
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  return succeed({ project, connections: await readConnections(deps.database, project.id) });
}
