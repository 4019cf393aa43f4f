/**
 * Applying checked project settings: one transaction however many change (store/admin/projects.ts
 * `changeProjectSettings`). Each setting's check lives with its own operation (set-rate-limit.ts,
 * set-storage-budget.ts, ...); update-project.ts runs several checks, then applies them together.
 */
import { changeProjectSettings, type Project, type ProjectSettings } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function applyProjectSettings(
  deps: OperationDeps,
  slug: string,
  settings: ProjectSettings,
): Promise<Result<Project>> {
  const project = await changeProjectSettings(deps.database, slug, settings, deps.clock.now());
  return project ? succeed(project) : refuse(refusals.projectNotFound(slug));
}
