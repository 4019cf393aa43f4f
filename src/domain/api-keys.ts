/** API keys: generating one, checking its format, hashing it for storage, and the prefix that identifies it. */
import { hash, randomInt } from 'node:crypto';

export const API_KEY_PREFIX = 'barge_sk_';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const BODY_LENGTH = 32;
const KEY_FORMAT = /^barge_sk_[A-Za-z0-9]{32}$/;
/** The first 12 characters of a key, shown to identify it (interface document 2.2). */
export const KEY_PREFIX_LENGTH = 12;

export function generateApiKey(): string {
  let body = '';
  // randomInt draws uniformly from a CSPRNG, so every character is unbiased.
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return API_KEY_PREFIX + body;
}

export function isWellFormedApiKey(key: string): boolean {
  return KEY_FORMAT.test(key);
}

/** SHA-256 in hex. The one-shot hash: createHash set an OpenSSL context up for each of the API's requests. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function apiKeyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}
