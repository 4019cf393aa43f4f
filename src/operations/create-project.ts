/**
 * Creates a project: a valid slug nobody has taken yet. The project's webhook signing secret comes
 * back with it this once (rotate-webhook-secret makes a new one); it is stored sealed when
 * BARGE_SECRET_KEY is set.
 */
import type { Config } from '../config.js';
import { isValidSlug } from '../domain/projects.js';
import { createProject as insertProject, type Project } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export type CreatedProject = Project & { webhookSecret: string };

/** BARGE_SECRET_KEY, when set, seals the signing secret at rest. */
export interface WebhookSecretDeps extends OperationDeps {
  config: Pick<Config, 'secretKey'>;
}

export async function createProject(deps: WebhookSecretDeps, input: { slug: string }): Promise<Result<CreatedProject>> {
  if (!isValidSlug(input.slug)) return refuse(refusals.invalidSlug(input.slug));
  const created = await insertProject(deps.database, input.slug, deps.clock.now(), deps.config.secretKey);
  if (created === 'slug_taken') return refuse(refusals.slugTaken(input.slug));
  return succeed(created);
}
