/** Standard Webhooks signatures: the HMAC key of a secret, the `v1` signature, and a cache of signing keys. */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { rememberBounded } from '../../bounded-map.js';

const SECRET_PREFIX = 'whsec_';

/** The HMAC key of a Standard Webhooks secret: `whsec_` and base64, or the bare base64 key. */
export function signingKey(secret: string): KeyObject {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new Error('a webhook secret cannot be empty');
  return createSecretKey(key);
}

/**
 * A Standard Webhooks `v1` signature: HMAC-SHA256 of `{id}.{timestamp}.{body}` under the
 * base64-decoded secret, as the `standardwebhooks` package's `Webhook.sign` makes it (the tests
 * verify with that package). node:crypto signs a typical body about ten times faster than the
 * package's pure-JS SHA-256, and every attempt signs once per secret.
 */
export function signWebhook(
  secret: string | KeyObject,
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = typeof secret === 'string' ? signingKey(secret) : secret;
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** Keys kept at most: one or two per project that receives webhooks. */
const KEYS_MAX = 1024;

/**
 * Signing keys by stored secret, made once: every attempt signs, a stored secret may be sealed
 * (opening it is a decryption), and a key is decoded from base64. `open` gives the usable secret
 * of a stored one, or null when it does not open (which does not change while the process runs:
 * the key that opens it is configuration).
 */
export class SigningKeys {
  private readonly keys = new Map<string, KeyObject | null>();

  constructor(private readonly open: (stored: string, projectId: string) => string | null) {}

  get(stored: string, projectId: string): KeyObject | null {
    const id = `${projectId}\u0000${stored}`;
    let key = this.keys.get(id);
    if (key === undefined) {
      const secret = this.open(stored, projectId);
      key = secret === null ? null : signingKey(secret);
      rememberBounded(this.keys, id, key, KEYS_MAX);
    }
    return key;
  }
}
