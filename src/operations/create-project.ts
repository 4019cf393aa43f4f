/**
 * Creates a project: a valid slug nobody has taken yet. The project's webhook signing secret comes
 * back with it this once (rotate-webhook-secret makes a new one).
 */
import { isValidSlug } from '../domain/projects.js';
import { createProject as insertProject, type Project } from '../store/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export type CreatedProject = Project & { webhookSecret: string };

export async function createProject(deps: OperationDeps, input: { slug: string }): Promise<Result<CreatedProject>> {
  if (!isValidSlug(input.slug)) return refuse(refusals.invalidSlug(input.slug));
  const created = await insertProject(deps.database.write, input.slug, deps.clock.now());
  if (created === 'slug_taken') return refuse(refusals.slugTaken(input.slug));
  return succeed(created);
}
