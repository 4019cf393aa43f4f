/**
 * Projects with their cargo counts by status: every project, or the one a project-limited caller
 * sees (`slug`). An unknown slug is an empty list for the list, project_not_found for one project.
 */
import { countCargoByStatus, findProjectBySlug, listProjects, type Project } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export interface ProjectOverview {
  project: Project;
  /** Cargo by status; statuses with none are left out. */
  cargoCounts: Record<string, number>;
}

export async function listProjectOverviews(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug?: string } = {},
): Promise<Result<ProjectOverview[]>> {
  let projects: Project[];
  if (input.slug === undefined) projects = await listProjects(deps.database);
  else {
    const found = await findProjectBySlug(deps.database, input.slug);
    projects = found ? [found] : [];
  }
  const counts = await countCargoByStatus(
    deps.database,
    projects.map((p) => p.id),
  );
  return succeed(projects.map((project) => ({ project, cargoCounts: counts.get(project.id) ?? {} })));
}

export async function showProject(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug: string },
): Promise<Result<ProjectOverview>> {
  const listed = await listProjectOverviews(deps, input);
  const found = listed.ok ? listed.value[0] : undefined;
  return found ? succeed(found) : refuse(refusals.projectNotFound(input.slug));
}
