/** A page of a project's cargo, newest first, filtered (the admin API's cargo list; GET /cargo's query). */
import { findProjectBySlug } from '../store/admin/projects.js';
import { type CargoFilter, type ListedCargo, listCargo } from '../store/cargo/list.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export type { CargoFilter, ListedCargo };

export async function listProjectCargo(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug: string; filter: CargoFilter },
): Promise<Result<{ cargo: ListedCargo[]; hasMore: boolean }>> {
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  return succeed(await listCargo(deps.database, project.id, input.filter));
}
