import { randomBytes } from 'node:crypto';

/** A Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** After a rotation the previous secret still signs for this long, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;
