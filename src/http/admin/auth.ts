/**
 * Authentication of the `/admin/v1/` scope: `Authorization: Bearer barge_at_…`, or the dashboard's
 * session cookie (src/http/admin/session-cookie.ts), and each request's caller.
 *
 * No cache: every request looks its token's hash up (one read by a unique index), and a session
 * its row joined to its token (one read too). Admin traffic is a person's clicks and scripts, far
 * from the cargo API's rates, and without a cache a revocation from any process (the CLI, another
 * API process) is seen on the very next request, on SQLite and PostgreSQL alike, with nothing to
 * invalidate: a revoked token's sessions end with it. The cargo API's key cache (src/http/auth.ts)
 * is untouched: nothing here runs on its routes.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashAdminToken, isWellFormedAdminToken } from '../../domain/admin-tokens.js';
import type { Clock } from '../../domain/clock.js';
import {
  hashSessionId,
  isWellFormedSessionId,
  renewedIdleExpiry,
  type SessionLifetimes,
  sessionEnded,
} from '../../domain/dashboard-sessions.js';
import { ApiError, errors } from '../../domain/errors.js';
import { findAdminSession, touchAdminSession } from '../../store/admin/admin-sessions.js';
import { findAdminTokenCredentials, touchAdminToken } from '../../store/admin/admin-tokens.js';
import type { Database } from '../../store/database.js';
import type { AuthFailureLimiter } from '../auth-failures.js';
import { crossSiteRefusal } from './cross-site.js';
import { sessionIdOf } from './session-cookie.js';

export interface AdminCaller {
  tokenId: string;
  tokenName: string;
  /** The one project the token sees; null: every project. */
  project: { id: string; slug: string } | null;
  /** The dashboard session the request came with; null: a bearer token. */
  session: { id: string; createdAt: number; idleExpiresAt: number; expiresAt: number } | null;
}

const ADMIN_CALLER = Symbol('barge.adminCaller');

const BEARER = /^Bearer +(\S+) *$/i;

export interface AdminAuthenticatorOptions {
  /** `last_used_at` is written at most this often per token. */
  touchIntervalMs?: number;
  onTouchError?: (err: unknown) => void;
  /** Failed authentications per client address: an address over its limit is refused (429) before any lookup. */
  failures?: AuthFailureLimiter;
  /** How long a dashboard session lasts idle, and at most. */
  sessions: SessionLifetimes;
}

export class AdminAuthenticator {
  private readonly lastTouched = new Map<string, number>();
  private readonly touchIntervalMs: number;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly options: AdminAuthenticatorOptions,
  ) {
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  get sessionLifetimes(): SessionLifetimes {
    return this.options.sessions;
  }

  /** The caller of an `Authorization` header. */
  authenticate(header: string | undefined, clientAddress: string): Promise<AdminCaller> {
    return this.counted(clientAddress, async () => {
      if (header === undefined || header === '') throw errors.missingAdminToken();
      return this.verify(BEARER.exec(header)?.[1]);
    });
  }

  /** The caller of a token given as such (signing in to the dashboard). */
  authenticateToken(token: string, clientAddress: string): Promise<AdminCaller> {
    return this.counted(clientAddress, async () => {
      if (!isWellFormedAdminToken(token)) throw errors.malformedSignInToken();
      return this.verify(token);
    });
  }

  /** The caller of a dashboard session cookie; records the session's use (at most once a minute). */
  authenticateSession(sessionId: string, clientAddress: string): Promise<AdminCaller> {
    return this.counted(clientAddress, async () => {
      if (!isWellFormedSessionId(sessionId)) throw errors.sessionEnded();
      const session = await findAdminSession(this.database, hashSessionId(sessionId));
      const now = this.clock.now();
      if (!session || session.tokenRevoked || sessionEnded(session, now)) throw errors.sessionEnded();
      let idleExpiresAt = session.idleExpiresAt;
      const renewed = renewedIdleExpiry(session, now, this.options.sessions);
      if (renewed !== null) {
        // Awaited, unlike a token's last use: the idle timeout depends on it.
        await touchAdminSession(this.database, session.id, now, renewed);
        idleExpiresAt = renewed;
      }
      this.touch(session.tokenId);
      return {
        tokenId: session.tokenId,
        tokenName: session.tokenName,
        project: session.project,
        session: { id: session.id, createdAt: session.createdAt, idleExpiresAt, expiresAt: session.expiresAt },
      };
    });
  }

  private async verify(token: string | undefined): Promise<AdminCaller> {
    if (token === undefined || !isWellFormedAdminToken(token)) throw errors.invalidAdminTokenFormat();
    const credentials = await findAdminTokenCredentials(this.database, hashAdminToken(token));
    if (!credentials || credentials.revoked) throw errors.invalidAdminToken();
    this.touch(credentials.tokenId);
    return {
      tokenId: credentials.tokenId,
      tokenName: credentials.tokenName,
      project: credentials.project,
      session: null,
    };
  }

  /** Refuses an address over its failure limit before any lookup, and counts this attempt's 401. */
  private async counted(clientAddress: string, attempt: () => Promise<AdminCaller>): Promise<AdminCaller> {
    try {
      const blockedFor = this.options.failures?.blockedFor(clientAddress) ?? null;
      if (blockedFor !== null) throw errors.tooManyFailedAuthentications(blockedFor);
      return await attempt();
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

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Makes every route of `scope` require an admin token or a dashboard session (an onRequest hook:
 * before the body is read). The `Authorization` header wins when both come; a state-changing
 * request signed in by the cookie must come from the dashboard's own origin (cross-site.ts).
 */
export function requireAdmin(scope: FastifyInstance, authenticator: AdminAuthenticator, publicBaseUrl: string): void {
  scope.decorateRequest(ADMIN_CALLER, null);
  scope.addHook('onRequest', async (request) => {
    const sessionId = request.headers.authorization === undefined ? sessionIdOf(request) : undefined;
    let caller: AdminCaller;
    if (sessionId === undefined) {
      caller = await authenticator.authenticate(request.headers.authorization, request.ip);
    } else {
      if (!SAFE_METHODS.has(request.method)) assertSameOrigin(request, publicBaseUrl);
      caller = await authenticator.authenticateSession(sessionId, request.ip);
    }
    request.setDecorator<AdminCaller>(ADMIN_CALLER, caller);
    request.log = request.log.child({ admin_token: caller.tokenId });
  });
}

/** Refuses a request that does not come from the dashboard's own origin (403 with the reason). */
export function assertSameOrigin(request: FastifyRequest, publicBaseUrl: string): void {
  const refusal = crossSiteRefusal(request.headers, request.host, publicBaseUrl);
  if (refusal !== null) throw errors.crossSiteRequest(refusal);
}

/** The caller of a request in the admin scope. */
export function adminOf(request: FastifyRequest): AdminCaller {
  const caller = request.getDecorator<AdminCaller | null>(ADMIN_CALLER);
  if (!caller) throw new Error('admin route reached without authentication');
  return caller;
}
