/**
 * Admin tokens (decisions.md, "Dashboard and admin API"): `barge_at_` and 32 characters, stored as
 * their SHA-256 like API keys. A token sees every project, or one.
 */
import { generateApiKey, hashApiKey } from './api-keys.js';

export const ADMIN_TOKEN_PREFIX = 'barge_at_';
const TOKEN_FORMAT = /^barge_at_[A-Za-z0-9]{32}$/;
/** The first 12 characters, shown to identify a token (as an API key's prefix). */
const TOKEN_PREFIX_LENGTH = 12;

export function generateAdminToken(): string {
  // The same unbiased CSPRNG body as an API key's, behind the admin prefix.
  return ADMIN_TOKEN_PREFIX + generateApiKey().slice('barge_sk_'.length);
}

export function isWellFormedAdminToken(token: string): boolean {
  return TOKEN_FORMAT.test(token);
}

export const hashAdminToken = hashApiKey;

export function adminTokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX_LENGTH);
}
