import type { Kysely } from 'kysely';
import { hashApiKey, isWellFormedApiKey } from '../domain/api-keys.js';
import type { Clock } from '../domain/clock.js';
import { errors } from '../domain/errors.js';
import { findKeyCredentials, type KeyCredentials, touchApiKeys } from '../store/api-keys.js';
import type { Schema } from '../store/schema.js';

export interface AuthContext {
  keyId: string;
  projectId: string;
  projectSlug: string;
  rateLimitMax: number | null;
}

export interface AuthenticatorOptions {
  /** How long a looked-up key is trusted before the database is asked again. */
  cacheTtlMs: number;
  cacheMaxEntries?: number;
  /** `last_used_at` is written at most this often per key, so reads don't become writes. */
  touchIntervalMs?: number;
  onTouchError?: (err: unknown) => void;
}

/**
 * Checks X-API-Key in the order of the interface document (section 5) and decisions.md: header
 * missing, format, lookup (unknown or deactivated), expiry, project inactive. The cache is keyed by
 * the key's SHA-256, never the key itself, and is bounded.
 */
export class Authenticator {
  private readonly cache = new Map<string, { credentials: KeyCredentials | null; fetchedAt: number }>();
  private readonly lastTouched = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly touchIntervalMs: number;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly clock: Clock,
    private readonly options: AuthenticatorOptions,
  ) {
    this.maxEntries = options.cacheMaxEntries ?? 10_000;
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  async authenticate(header: string | string[] | undefined): Promise<AuthContext> {
    if (header === undefined || header === '') throw errors.missingApiKey();
    const key = Array.isArray(header) ? header[0] : header;
    if (key === undefined || !isWellFormedApiKey(key)) throw errors.invalidKeyFormat();

    const now = this.clock.now();
    const credentials = await this.lookup(hashApiKey(key), now);
    if (!credentials?.keyIsActive) throw errors.invalidApiKey();
    if (credentials.expiresAt !== null && credentials.expiresAt <= now) throw errors.expiredApiKey();
    if (!credentials.projectIsActive) throw errors.projectInactive();

    this.touch(credentials.keyId, now);
    return {
      keyId: credentials.keyId,
      projectId: credentials.projectId,
      projectSlug: credentials.projectSlug,
      rateLimitMax: credentials.projectRateLimitMax,
    };
  }

  private async lookup(hash: string, now: number): Promise<KeyCredentials | null> {
    const cached = this.cache.get(hash);
    if (cached && now - cached.fetchedAt < this.options.cacheTtlMs) return cached.credentials;
    const credentials = (await findKeyCredentials(this.db, hash)) ?? null;
    if (this.options.cacheTtlMs > 0) {
      this.cache.delete(hash);
      if (this.cache.size >= this.maxEntries) {
        // Maps iterate in insertion order: the first entry is the oldest.
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
      this.cache.set(hash, { credentials, fetchedAt: now });
    }
    return credentials;
  }

  private touch(keyId: string, now: number): void {
    const last = this.lastTouched.get(keyId);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    if (this.lastTouched.size >= this.maxEntries) this.lastTouched.clear();
    this.lastTouched.set(keyId, now);
    // Advisory bookkeeping: a lost update costs nothing, so it does not hold up the request.
    touchApiKeys(this.db, [keyId], now).catch((err: unknown) => this.options.onTouchError?.(err));
  }
}
