/**
 * The dashboard's session cookie: `barge_session`, HttpOnly (no script reads it), SameSite=Strict
 * (no other site's page makes the browser send it), Path=/admin/v1 (sent to the admin API only,
 * never to the cargo API or anywhere else), Secure when the request came over TLS or the service's
 * public address (BARGE_PUBLIC_BASE_URL) is https (TLS ended at a proxy in front). A browser
 * session cookie (no Max-Age): the server's idle and absolute expiry decide how long it works.
 */
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../../domain/dashboard-sessions.js';

export const SESSION_COOKIE_PATH = '/admin/v1';

function cookieOptions(request: FastifyRequest, publicBaseUrl: string): CookieSerializeOptions {
  return {
    path: SESSION_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https' || publicBaseUrl.startsWith('https:'),
  };
}

/** The session id the request's cookie carries, if any. */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const value = request.cookies[SESSION_COOKIE];
  return value === undefined || value === '' ? undefined : value;
}

export function setSessionCookie(reply: FastifyReply, sessionId: string, publicBaseUrl: string): void {
  reply.setCookie(SESSION_COOKIE, sessionId, cookieOptions(reply.request, publicBaseUrl));
}

export function clearSessionCookie(reply: FastifyReply, publicBaseUrl: string): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(reply.request, publicBaseUrl));
}
