/**
 * Dashboard sessions (decisions.md, "Dashboard and admin API"): signing in with an admin token
 * opens a session whose id travels in an HttpOnly cookie. The id is 32 random bytes; only its
 * SHA-256 is stored, so a copy of the database opens no session. A session ends when it is signed
 * out, sits idle past its idle timeout, reaches its absolute lifetime, or its admin token is revoked.
 */
import { randomBytes } from 'node:crypto';
import { hashApiKey } from './api-keys.js';

export const SESSION_COOKIE = 'barge_session';
const SESSION_ID_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export interface SessionLifetimes {
  /** A session unused for this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however busy. */
  absoluteMs: number;
}

/**
 * A used session's last-seen time (and so its idle expiry) is written at most this often: the
 * idle timeout then holds to within this, for one write a minute instead of one a request.
 */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;

export function generateSessionId(): string {
  return randomBytes(32).toString('base64url');
}

export function isWellFormedSessionId(id: string): boolean {
  return SESSION_ID_FORMAT.test(id);
}

export const hashSessionId = hashApiKey;

/** The times of a session opened at `now`. */
export function sessionTimes(now: number, lifetimes: SessionLifetimes) {
  return {
    createdAt: now,
    lastSeenAt: now,
    idleExpiresAt: Math.min(now + lifetimes.idleMs, now + lifetimes.absoluteMs),
    expiresAt: now + lifetimes.absoluteMs,
  };
}

export interface SessionTimes {
  lastSeenAt: number;
  idleExpiresAt: number;
  expiresAt: number;
}

export function sessionEnded(session: SessionTimes, now: number): boolean {
  return now >= session.idleExpiresAt || now >= session.expiresAt;
}

/** The new idle expiry when a use at `now` should be recorded; null when the last record is recent enough. */
export function renewedIdleExpiry(session: SessionTimes, now: number, lifetimes: SessionLifetimes): number | null {
  if (now - session.lastSeenAt < SESSION_TOUCH_INTERVAL_MS) return null;
  return Math.min(now + lifetimes.idleMs, session.expiresAt);
}
