/**
 * Admin-token authentication of the `/admin/v1/` scope: `Authorization: Bearer barge_at_…`, its
 * checks in order (missing, format, unknown or revoked), and each request's caller.
 *
 * No cache: every request looks its token's hash up (one read by a unique index). Admin traffic is
 * a person's clicks and scripts, far from the cargo API's rates, and without a cache a revocation
 * from any process (the CLI, another API process) is seen on the very next request, on SQLite and
 * PostgreSQL alike, with nothing to invalidate. The cargo API's key cache (src/http/auth.ts) is
 * untouched: nothing here runs on its routes.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashAdminToken, isWellFormedAdminToken } from '../../domain/admin-tokens.js';
import type { Clock } from '../../domain/clock.js';
import { ApiError, errors } from '../../domain/errors.js';
import { findAdminTokenCredentials, touchAdminToken } from '../../store/admin/admin-tokens.js';
import type { Database } from '../../store/database.js';
import type { AuthFailureLimiter } from '../auth-failures.js';

export interface AdminCaller {
  tokenId: string;
  /** The one project the token sees; null: every project. */
  project: { id: string; slug: string } | null;
}

const ADMIN_CALLER = Symbol('barge.adminCaller');

const BEARER = /^Bearer +(\S+) *$/i;

export interface AdminAuthenticatorOptions {
  /** `last_used_at` is written at most this often per token. */
  touchIntervalMs?: number;
  onTouchError?: (err: unknown) => void;
  /** Failed authentications per client address: an address over its limit is refused (429) before any lookup. */
  failures?: AuthFailureLimiter;
}

export class AdminAuthenticator {
  private readonly lastTouched = new Map<string, number>();
  private readonly touchIntervalMs: number;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly options: AdminAuthenticatorOptions = {},
  ) {
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  async authenticate(header: string | undefined, clientAddress: string): Promise<AdminCaller> {
    try {
      const blockedFor = this.options.failures?.blockedFor(clientAddress) ?? null;
      if (blockedFor !== null) throw errors.tooManyFailedAuthentications(blockedFor);
      if (header === undefined || header === '') throw errors.missingAdminToken();
      const token = BEARER.exec(header)?.[1];
      if (token === undefined || !isWellFormedAdminToken(token)) throw errors.invalidAdminTokenFormat();
      const credentials = await findAdminTokenCredentials(this.database, hashAdminToken(token));
      if (!credentials || credentials.revoked) throw errors.invalidAdminToken();
      this.touch(credentials.tokenId);
      return { tokenId: credentials.tokenId, project: credentials.project };
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 401) this.options.failures?.fail(clientAddress);
      throw err;
    }
  }

  private touch(tokenId: string): void {
    const now = this.clock.now();
    const last = this.lastTouched.get(tokenId);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    if (this.lastTouched.size >= 10_000) this.lastTouched.clear();
    this.lastTouched.set(tokenId, now);
    // Advisory bookkeeping, as for API keys: it does not hold up the request.
    touchAdminToken(this.database, tokenId, now).catch((err: unknown) => this.options.onTouchError?.(err));
  }
}

/** Makes every route of `scope` require an admin token (an onRequest hook: before the body is read). */
export function requireAdminToken(scope: FastifyInstance, authenticator: AdminAuthenticator): void {
  scope.decorateRequest(ADMIN_CALLER, null);
  scope.addHook('onRequest', async (request) => {
    const caller = await authenticator.authenticate(request.headers.authorization, request.ip);
    request.setDecorator<AdminCaller>(ADMIN_CALLER, caller);
    request.log = request.log.child({ admin_token: caller.tokenId });
  });
}

/** The caller of a request in the admin scope. */
export function adminOf(request: FastifyRequest): AdminCaller {
  const caller = request.getDecorator<AdminCaller | null>(ADMIN_CALLER);
  if (!caller) throw new Error('admin route reached without authentication');
  return caller;
}
