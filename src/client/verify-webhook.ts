/**
 * Checks a webhook barge delivered: a Standard Webhooks signature (standardwebhooks.com), HMAC-SHA256
 * of `{webhook-id}.{webhook-timestamp}.{body}` under the base64 secret after `whsec_`. Needs
 * node:crypto (a synchronous HMAC): it runs where webhooks are received, on a server.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A timestamp further than this from now is refused, against replays. */
const TOLERANCE_SECONDS = 5 * 60;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/**
 * The parsed payload when one of the `v1` signatures (two during a secret rotation) matches and the
 * timestamp is within 5 minutes of now; throws a WebhookVerificationError otherwise.
 */
export function verifyWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  rawBody: string | Uint8Array,
): unknown {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  }
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - seconds) > TOLERANCE_SECONDS) {
    throw new WebhookVerificationError('webhook-timestamp is not within 5 minutes of now');
  }
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('no webhook-signature matches the secret');
  return JSON.parse(body);
}

function header(headers: Headers | Record<string, string | string[] | undefined>, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const found = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = found === undefined ? undefined : record[found];
  return Array.isArray(value) ? value[0] : value;
}
