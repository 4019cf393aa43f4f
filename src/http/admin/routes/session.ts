/**
 * The dashboard's session routes: sign in with an admin token (a session and its cookie), who is
 * signed in, sign out. Signing in is the one admin route without a caller yet: it is registered
 * outside the authenticated scope, and does its own cross-site check.
 */
import { Type } from 'typebox';
import type { Clock } from '../../../domain/clock.js';
import { isoTime } from '../../../domain/clock.js';
import { generateSessionId, hashSessionId, sessionTimes } from '../../../domain/dashboard-sessions.js';
import { deleteAdminSession, insertAdminSession } from '../../../store/admin/admin-sessions.js';
import type { Database } from '../../../store/database.js';
import type { TypedScope } from '../../typed-scope.js';
import { type AdminAuthenticator, type AdminCaller, adminOf, assertSameOrigin } from '../auth.js';
import { adminAuthErrorResponses, adminTokenSecurity, errorExample, invalidBodyResponse } from '../schemas.js';
import { clearSessionCookie, setSessionCookie } from '../session-cookie.js';

export interface SessionRoutesDeps {
  database: Database;
  clock: Clock;
  authenticator: AdminAuthenticator;
  publicBaseUrl: string;
}

const tags = ['admin: session'];

const SessionBody = Type.Object(
  {
    admin_token: Type.Object({
      id: Type.String(),
      name: Type.String(),
      project: Type.Union([Type.String(), Type.Null()], {
        description: 'The slug of the one project the token sees; null: every project.',
      }),
    }),
    session: Type.Union(
      [
        Type.Object({
          created_at: Type.String({ description: 'When it was signed in, ISO 8601, UTC.' }),
          idle_expires_at: Type.String({ description: 'When it ends unless used again, ISO 8601, UTC.' }),
          expires_at: Type.String({ description: 'When it ends however busy, ISO 8601, UTC.' }),
        }),
        Type.Null(),
      ],
      { description: 'The dashboard session; null when the request came with a bearer token.' },
    ),
  },
  {
    examples: [
      {
        admin_token: { id: 'adt_01jd5q3r5t7v9x1z3b5d7f9h1k', name: 'ops laptop', project: null },
        session: {
          created_at: '2026-11-21T16:00:00.000Z',
          idle_expires_at: '2026-11-21T16:30:00.000Z',
          expires_at: '2026-11-22T04:00:00.000Z',
        },
      },
    ],
  },
);

export type SessionJson = ReturnType<typeof sessionJson>;

function sessionJson(caller: AdminCaller) {
  return {
    admin_token: { id: caller.tokenId, name: caller.tokenName, project: caller.project?.slug ?? null },
    session:
      caller.session === null
        ? null
        : {
            created_at: isoTime(caller.session.createdAt),
            idle_expires_at: isoTime(caller.session.idleExpiresAt),
            expires_at: isoTime(caller.session.expiresAt),
          },
  };
}

const crossSiteResponse = {
  403: errorExample(
    "Cross-site request refused: its Sec-Fetch-Site header is 'cross-site', not 'same-origin'. The dashboard's session cookie is accepted only from the dashboard's own pages; a script should send Authorization: Bearer barge_at_… instead.",
    'The request did not come from the dashboard’s own origin (Origin, Sec-Fetch-Site).',
  ),
};

/** POST /session: outside the authenticated scope. */
export function registerSignIn(scope: TypedScope, deps: SessionRoutesDeps): void {
  scope.post(
    '/session',
    {
      schema: {
        summary: 'Sign in to the dashboard',
        description:
          'Opens a dashboard session with an admin token and sets its cookie (`barge_session`: HttpOnly, SameSite=Strict, Path=/admin/v1, Secure over TLS or when BARGE_PUBLIC_BASE_URL is https). Every admin route then accepts the cookie instead of the bearer header; a state-changing request with the cookie must come from the dashboard’s own origin (Origin and Sec-Fetch-Site), and so must this one. The session ends when signed out, idle for BARGE_DASHBOARD_IDLE_TIMEOUT_MS, BARGE_DASHBOARD_SESSION_MAX_MS after sign-in, or from the next request after its admin token is revoked.',
        tags,
        security: [],
        body: Type.Object(
          { token: Type.String({ maxLength: 200, description: 'An admin token, `barge_at_…`.' }) },
          { additionalProperties: false, examples: [{ token: 'barge_at_Q2hhbmdlZCBzZWNyZXQgZm9yIHRoZSBl' }] },
        ),
        response: {
          201: SessionBody,
          ...invalidBodyResponse('Invalid request body: /token is required.', 'A body that does not match.'),
          ...crossSiteResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request, reply) => {
      assertSameOrigin(request, deps.publicBaseUrl);
      const caller = await deps.authenticator.authenticateToken(request.body.token, request.ip);
      const sessionId = generateSessionId();
      const times = sessionTimes(deps.clock.now(), deps.authenticator.sessionLifetimes);
      const { id } = await insertAdminSession(deps.database, {
        sessionHash: hashSessionId(sessionId),
        adminTokenId: caller.tokenId,
        ...times,
      });
      request.log.info({ admin_token: caller.tokenId, session: id }, 'dashboard session opened');
      setSessionCookie(reply, sessionId, deps.publicBaseUrl);
      reply.code(201);
      return sessionJson({ ...caller, session: { id, ...times } });
    },
  );
}

/** GET and DELETE /session: in the authenticated scope. */
export function registerSessionRoutes(scope: TypedScope, deps: SessionRoutesDeps): void {
  scope.get(
    '/session',
    {
      schema: {
        summary: 'Who is signed in',
        description: 'The admin token of this request (cookie or bearer) and its dashboard session.',
        tags,
        security: adminTokenSecurity,
        response: { 200: SessionBody, ...adminAuthErrorResponses },
      },
    },
    async (request) => sessionJson(adminOf(request)),
  );

  scope.delete(
    '/session',
    {
      schema: {
        summary: 'Sign out of the dashboard',
        description:
          'Ends the session of the cookie (its row is deleted: the cookie opens nothing from the next request on, in every API process) and clears the cookie. With a bearer token there is no session: nothing changes.',
        tags,
        security: adminTokenSecurity,
        response: { 204: Type.Null({ description: 'Signed out.' }), ...crossSiteResponse, ...adminAuthErrorResponses },
      },
    },
    async (request, reply) => {
      const { session } = adminOf(request);
      if (session !== null) await deleteAdminSession(deps.database, session.id);
      clearSessionCookie(reply, deps.publicBaseUrl);
      reply.code(204);
    },
  );
}
