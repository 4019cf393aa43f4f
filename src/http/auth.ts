/** API-key authentication of the cargo routes: the checks in order, their bounded caches, and each request's caller. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rememberBounded } from '../bounded-map.js';
import { hashApiKey, isWellFormedApiKey } from '../domain/api-keys.js';
import type { Clock } from '../domain/clock.js';
import { ApiError, errors } from '../domain/errors.js';
import type { SpendSetting } from '../domain/spend.js';
import { findKeyCredentials, type KeyCredentials, touchApiKeys } from '../store/admin/api-keys.js';
import { readAuthChanges } from '../store/auth-changes.js';
import type { Database } from '../store/database.js';
import type { AuthFailureLimiter } from './auth-failures.js';

export interface AuthContext {
  keyId: string;
  projectId: string;
  projectSlug: string;
  rateLimitMax: number | null;
  /** The project's storage budget (bytes accepted per UTC day, bytes held); null: the default. */
  byteBudget: { daily: number | null; held: number | null };
  /** The project's model allowlist (globs); null: every model. */
  allowedModels: readonly string[] | null;
  /** The project's spend budget setting (domain/spend.ts). */
  spend: SpendSetting;
}

/**
 * Where a request's AuthContext lives: a request decorator that only the cargo scope declares,
 * named by a symbol this module keeps to itself, so `authOf` is the only way to read it.
 *
 * Why a scoped decorator and not a WeakMap beside the routes: the context lives and dies with its
 * request, with no module-level table shared by every app in the process; Fastify declares the
 * slot only for requests of the scope that runs the check, so a route registered outside it that
 * asks for the context fails loudly (FST_ERR_DEC_UNDECLARED) instead of finding nothing; and a
 * slot declared up front (as `null`) keeps every request object the same shape. The type comes
 * from `authOf` (getDecorator/setDecorator), so no global module augmentation is needed, and no
 * service is hung on the instance: the authenticator is still passed in by hand.
 */
const AUTH_CONTEXT = Symbol('barge.authContext');

/**
 * Makes every route of `scope` require an API key: declares the request slot and adds the
 * onRequest hook that authenticates (first of the scope's hooks, so key problems come before the
 * rate limit and the body).
 */
export function requireApiKey(scope: FastifyInstance, authenticator: Authenticator): void {
  scope.decorateRequest(AUTH_CONTEXT, null);
  scope.addHook('onRequest', async (request, reply) => {
    const auth = await authenticator.authenticate(apiKeyOf(request), request.ip);
    request.setDecorator<AuthContext>(AUTH_CONTEXT, auth);
    // The audit trail: every log line of the request, "request completed" included, names the
    // project and the key's id (never the key itself). pino's per-request child takes the bindings:
    // a second child per request cost more than the rest of authentication (bench:submit profile).
    const bindings = { project: auth.projectSlug, key: auth.keyId };
    const log = request.log as typeof request.log & { setBindings?: (bindings: object) => void };
    if (log.setBindings) log.setBindings(bindings);
    else request.log = reply.log = request.log.child(bindings);
  });
}

/**
 * The route option of routes that also take the key as `Authorization: Bearer <key>` (the
 * provider-compatible endpoints, whose SDKs send it so); X-API-Key wins when both are given.
 */
export interface BearerKeyConfig {
  bearerApiKey?: boolean;
}

/** The API key a request presents: X-API-Key, or Bearer on routes that take it. */
function apiKeyOf(request: FastifyRequest): string | string[] | undefined {
  const header = request.headers['x-api-key'];
  if (header !== undefined || (request.routeOptions.config as BearerKeyConfig).bearerApiKey !== true) return header;
  return /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
}

/** The caller of a request in a scope that `requireApiKey` guards. */
export function authOf(request: FastifyRequest): AuthContext {
  const auth = request.getDecorator<AuthContext | null>(AUTH_CONTEXT);
  if (!auth) throw new Error('route reached without authentication');
  return auth;
}

export interface AuthenticatorOptions {
  /** How long a looked-up key is trusted before the database is asked again. */
  cacheTtlMs: number;
  /** Entries of each cache: keys found in the database, and misses (kept apart, see lookup). */
  cacheMaxEntries?: number;
  /** `last_used_at` is written at most this often per key, so reads don't become writes. */
  touchIntervalMs?: number;
  /** How often, at most, the change counter is read to learn that cached keys are stale. */
  changeCheckMs?: number;
  onTouchError?: (err: unknown) => void;
  /** Counts failed authentications per client address and refuses an address over its limit. */
  failures?: AuthFailureLimiter;
}

/**
 * Checks X-API-Key in the order of the interface document (section 5) and decisions.md: header
 * missing, format, lookup (unknown or deactivated), expiry, project inactive. The cache is keyed by
 * the key's SHA-256, never the key itself, and is bounded.
 *
 * Revocation is immediate, in every process: a key or project change bumps a counter in the same
 * transaction (store/auth-changes.ts), and this reads the counter at most every `changeCheckMs`
 * (200 ms) while requests come in, dropping the whole cache when it moved. One tiny read a few
 * times a second instead of one per request; it also works when the change comes from the CLI in
 * another process, on SQLite and PostgreSQL alike, and cannot miss a change the way a dropped
 * LISTEN connection would. Expiry needs no invalidation: it is checked on every request.
 *
 * Keys found in the database and misses live in two caches of their own, each bounded: random
 * well-formed keys (a prober's) only ever fill and evict the misses, never a real key's entry.
 * Before any lookup, an address over its limit of failed authentications is refused with 429
 * (auth-failures.ts), unless it presents a key that has passed authentication in this process.
 */
export class Authenticator {
  private readonly known = new Map<string, { credentials: KeyCredentials; fetchedAt: number }>();
  private readonly misses = new Map<string, number>();
  /**
   * Keys that passed authentication here, kept across cache drops: an address over its failure
   * limit may still present one of these (it is then checked as usual). Holds hashes only.
   */
  private readonly vouched = new Map<string, true>();
  private readonly lastTouched = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly touchIntervalMs: number;
  private readonly changeCheckMs: number;
  /** The counter value the cache is valid for, and when (performance.now()) it was last read. */
  private seenChanges: number | null = null;
  private changesReadAt = Number.NEGATIVE_INFINITY;
  private changesRead: Promise<void> | null = null;
  /** Moves on every cache drop: a lookup that began before one must not refill the cache. */
  private generation = 0;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly options: AuthenticatorOptions,
  ) {
    this.maxEntries = options.cacheMaxEntries ?? 10_000;
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
    this.changeCheckMs = options.changeCheckMs ?? 200;
  }

  async authenticate(header: string | string[] | undefined, clientAddress?: string): Promise<AuthContext> {
    try {
      return await this.check(header, clientAddress);
    } catch (err) {
      // Only a refused key counts (401): not a 429 of this limit, nor the database failing.
      if (err instanceof ApiError && err.statusCode === 401 && clientAddress !== undefined) {
        this.options.failures?.fail(clientAddress);
      }
      throw err;
    }
  }

  private async check(header: string | string[] | undefined, clientAddress?: string): Promise<AuthContext> {
    const blockedFor = clientAddress === undefined ? null : (this.options.failures?.blockedFor(clientAddress) ?? null);
    const key = Array.isArray(header) ? header[0] : header;
    const hash = key !== undefined && isWellFormedApiKey(key) ? hashApiKey(key) : null;
    if (blockedFor !== null && !(hash !== null && this.vouched.has(hash))) {
      throw errors.tooManyFailedAuthentications(blockedFor);
    }
    if (header === undefined || header === '') throw errors.missingApiKey();
    if (hash === null) throw errors.invalidKeyFormat();

    const now = this.clock.now();
    const credentials = await this.lookup(hash, now);
    if (!credentials?.keyIsActive) throw errors.invalidApiKey();
    if (credentials.expiresAt !== null && credentials.expiresAt <= now) throw errors.expiredApiKey();
    if (!credentials.projectIsActive) throw errors.projectInactive();

    this.touch(credentials.keyId, now);
    rememberBounded(this.vouched, hash, true, this.maxEntries);
    return {
      keyId: credentials.keyId,
      projectId: credentials.projectId,
      projectSlug: credentials.projectSlug,
      rateLimitMax: credentials.projectRateLimitMax,
      byteBudget: { daily: credentials.projectDailyByteBudget, held: credentials.projectHeldByteBudget },
      allowedModels: credentials.projectAllowedModels,
      spend: credentials.projectSpend,
    };
  }

  private async lookup(hash: string, now: number): Promise<KeyCredentials | null> {
    const caching = this.options.cacheTtlMs > 0;
    if (caching) await this.dropCacheIfChanged();
    const found = this.known.get(hash);
    if (found && now - found.fetchedAt < this.options.cacheTtlMs) return found.credentials;
    const missedAt = this.misses.get(hash);
    if (missedAt !== undefined && now - missedAt < this.options.cacheTtlMs) return null;
    const generation = this.generation;
    const credentials = (await findKeyCredentials(this.database, hash)) ?? null;
    if (caching && generation === this.generation) {
      if (credentials) {
        this.misses.delete(hash);
        rememberBounded(this.known, hash, { credentials, fetchedAt: now }, this.maxEntries);
      } else {
        this.known.delete(hash);
        rememberBounded(this.misses, hash, now, this.maxEntries);
      }
    }
    return credentials;
  }

  /** Reads the change counter (at most every changeCheckMs) and drops the cache if it moved. */
  private async dropCacheIfChanged(): Promise<void> {
    if (performance.now() - this.changesReadAt < this.changeCheckMs) return;
    this.changesRead ??= readAuthChanges(this.database)
      .then((value) => {
        if (value !== this.seenChanges) {
          this.known.clear();
          this.misses.clear();
          this.generation++;
          this.seenChanges = value;
        }
        this.changesReadAt = performance.now();
      })
      .finally(() => {
        this.changesRead = null;
      });
    await this.changesRead;
  }

  private touch(keyId: string, now: number): void {
    const last = this.lastTouched.get(keyId);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    if (this.lastTouched.size >= this.maxEntries) this.lastTouched.clear();
    this.lastTouched.set(keyId, now);
    // Advisory bookkeeping: a lost update costs nothing, so it does not hold up the request.
    touchApiKeys(this.database, [keyId], now).catch((err: unknown) => this.options.onTouchError?.(err));
  }
}
