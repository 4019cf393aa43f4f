/** Connection rules: external ids, role ARNs, notification addresses, allow-lists and how often a check may run. */
import { randomInt } from 'node:crypto';

/**
 * Glossary
 * - connection: a project's stored access to a customer's bucket: a role the service assumes
 *   (with an external id the service generated), or for S3-compatible stores an endpoint and
 *   static credentials. Object deliveries name one by id.
 * - external id: the shared value the customer puts in the role's trust policy, so that only
 *   this project's connection, not another tenant naming the same role, can assume it.
 * - capability check: a probe that really assumes the role and writes `svc-verify.json`.
 */

/** Capability checks write a real object: one per minute per connection (document section 8). */
export const CHECK_INTERVAL_MS = 60_000;

/** When the next capability check of a connection last checked at `lastCheckAt` may run; null: now. */
export function nextCheckAt(lastCheckAt: number | null, now: number): number | null {
  return lastCheckAt !== null && lastCheckAt + CHECK_INTERVAL_MS > now ? lastCheckAt + CHECK_INTERVAL_MS : null;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `barge-` + 32 random characters: within STS's ExternalId alphabet and length. */
export function newExternalId(): string {
  let out = 'barge-';
  for (let i = 0; i < 32; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

const ROLE_ARN = /^arn:aws:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;

export function isRoleArn(value: string): boolean {
  return ROLE_ARN.test(value);
}

/** A notification address: one mailbox, no display name (it goes into an SMTP envelope). */
export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && /^[^\s@<>(),;:"[\]\\]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(value);
}

/** A connection's allow-list admits the target (by ARN: a bucket, queue, topic or bus); no list admits any. */
export function targetAllowed(allowList: readonly string[] | null, targetArn: string): boolean {
  return allowList === null || allowList.includes(targetArn);
}

/**
 * Why a delivery through a connection that no longer exists failed: the attempt that finds it gone
 * and the deletion that ends its pending deliveries record the same class and text.
 */
export const CONNECTION_NOT_FOUND = 'connection_not_found';
export function connectionNotFoundDetail(connectionId: string): string {
  return `${CONNECTION_NOT_FOUND}: connection ${connectionId} no longer exists in this project`;
}
