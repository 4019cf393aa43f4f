/** Webhook signing secrets: making one, storing it (sealed when a key is configured), and opening it to sign. */
import { randomBytes } from 'node:crypto';
import { openSecret, sealSecret } from './secret-box.js';

/** A Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** After a rotation the previous secret still signs for this long, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;

/**
 * How a signing secret is stored: sealed with BARGE_SECRET_KEY (secret-box.ts, bound to the
 * project's id, so a value copied onto another project does not open) when a key is configured,
 * as it is otherwise. A stored value that starts with `whsec_` is plaintext; a sealed one never does.
 */
export function storedWebhookSecret(secret: string, key: Buffer | null, projectId: string): string {
  return key === null ? secret : sealSecret(key, secret, projectId);
}

export function isPlaintextWebhookSecret(stored: string): boolean {
  return stored.startsWith('whsec_');
}

/** The secret to sign with, or null when it is sealed and the key is missing or another one. */
export function usableWebhookSecret(stored: string, key: Buffer | null, projectId: string): string | null {
  if (isPlaintextWebhookSecret(stored)) return stored;
  return key === null ? null : openSecret(key, stored, projectId);
}
