/** A project's bulk recoveries, newest first (the newest RECOVERIES_LISTED). */
import { findProjectBySlug } from '../store/admin/projects.js';
import { type Recovery, listRecoveries as readRecoveries } from '../store/recoveries/recoveries.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export const RECOVERIES_LISTED = 50;

export async function listRecoveries(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug: string },
): Promise<Result<Recovery[]>> {
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  return succeed(await readRecoveries(deps.database, project.id, RECOVERIES_LISTED));
}
