/** Lists every project, by slug. */
import type { Project } from '../store/admin/projects.js';
import { listProjects as readProjects } from '../store/admin/projects.js';
import { type OperationDeps, type Result, succeed } from './operation.js';

export type { Project };

export async function listProjects(deps: Pick<OperationDeps, 'database'>): Promise<Result<Project[]>> {
  return succeed(await readProjects(deps.database));
}
