/**
 * Gives a project a new webhook signing secret. The previous one keeps signing beside it until
 * `previousSecretValidUntil`, so receivers can switch over without rejecting a delivery.
 */
import { PREVIOUS_SECRET_GRACE_MS } from '../domain/webhook-secret.js';
import { type Project, rotateWebhookSecret as replaceWebhookSecret } from '../store/admin/projects.js';
import type { WebhookSecretDeps } from './create-project.js';
import { type Result, refusals, refuse, succeed } from './operation.js';

export interface RotatedSecret {
  project: Project;
  webhookSecret: string;
  previousSecretValidUntil: number;
}

export async function rotateWebhookSecret(
  deps: WebhookSecretDeps,
  input: { slug: string },
): Promise<Result<RotatedSecret>> {
  const now = deps.clock.now();
  const rotated = await replaceWebhookSecret(deps.database, input.slug, now, deps.config.secretKey);
  if (!rotated) return refuse(refusals.projectNotFound(input.slug));
  return succeed({ ...rotated, previousSecretValidUntil: now + PREVIOUS_SECRET_GRACE_MS });
}
