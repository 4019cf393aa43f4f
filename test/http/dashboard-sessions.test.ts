/**
 * Dashboard sessions on every backend: signing in with an admin token sets an HttpOnly,
 * SameSite=Strict cookie (Secure behind an https public address) backed by a stored session (only
 * its hash); the cookie stands for the token on every admin route; signing out ends it; idle and
 * absolute expiry on an injected clock; revoking the token ends its sessions on the next request;
 * a state-changing request with the cookie from anywhere but the dashboard's own origin is 403 and
 * changes nothing; and none of it reaches the cargo API.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { createAdminToken } from '../../src/operations/create-admin-token.js';
import { revokeAdminToken } from '../../src/operations/revoke-admin-token.js';
import { createProjectWithKey } from '../helpers/app.js';
import { assertDetail } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const IDLE_MS = 30 * 60_000;
const ABSOLUTE_MS = 12 * 3_600_000;
const SESSION_ENDED =
  'Your dashboard session has ended (signed out, idle or past its lifetime, or its admin token was revoked). Sign in again.';
const crossSite = (reason: string) =>
  `Cross-site request refused: ${reason}. The dashboard's session cookie is accepted only from the dashboard's own pages; a script should send Authorization: Bearer barge_at_… instead.`;

for (const backend of await backends()) {
  describe(`dashboard sessions on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0));
    const h = harness(backend, { clock });
    const deps = () => ({ database: h.db.database, clock });

    async function token(slug?: string): Promise<{ id: string; token: string }> {
      const made = await createAdminToken(deps(), { name: 'laptop', ...(slug === undefined ? {} : { slug }) });
      assert.ok(made.ok);
      return { id: made.value.adminToken.id, token: made.value.token };
    }

    /** What a browser on the dashboard's own page sends with a state-changing request. */
    const sameOrigin = () => ({ origin: h.app.url, 'sec-fetch-site': 'same-origin' });

    async function signIn(adminToken: string) {
      const res = await h.app.request('POST', '/admin/v1/session', {
        body: { token: adminToken },
        headers: sameOrigin(),
      });
      assert.equal(res.status, 201, res.text);
      const setCookie = res.headers.getSetCookie();
      assert.equal(setCookie.length, 1);
      const value = /^barge_session=([^;]+)/.exec(setCookie[0] as string)?.[1];
      assert.ok(value, setCookie[0]);
      return { cookie: `barge_session=${value}`, value, setCookie: setCookie[0] as string, body: res.body };
    }

    const withCookie = (
      cookie: string,
      method: string,
      path: string,
      options: { body?: unknown; headers?: Record<string, string> } = {},
    ) =>
      h.app.request(method, `/admin/v1${path}`, {
        ...options,
        headers: { cookie, ...(method === 'GET' ? {} : sameOrigin()), ...options.headers },
      });

    test('signing in sets an HttpOnly, SameSite=Strict cookie on /admin/v1 only, backed by a stored hash; the cookie stands for the token', async () => {
      const t = await token();
      const { cookie, value, setCookie, body } = await signIn(t.token);
      const attributes = setCookie.split(';').map((a) => a.trim().toLowerCase());
      assert.ok(attributes.includes('httponly'), setCookie);
      assert.ok(attributes.includes('samesite=strict'), setCookie);
      assert.ok(attributes.includes('path=/admin/v1'), setCookie);
      assert.ok(!attributes.includes('secure'), `plain http, no https public address: ${setCookie}`);
      assert.ok(!attributes.some((a) => a.startsWith('max-age') || a.startsWith('expires')), setCookie);
      assert.match(value, /^[A-Za-z0-9_-]{43}$/);
      const now = clock.now();
      assert.deepEqual(body, {
        admin_token: { id: t.id, name: 'laptop', project: null },
        session: {
          created_at: new Date(now).toISOString(),
          idle_expires_at: new Date(now + IDLE_MS).toISOString(),
          expires_at: new Date(now + ABSOLUTE_MS).toISOString(),
        },
      });
      // Only the hash is stored, with the token it came from.
      const rows = await h.db.database.read
        .selectFrom('admin_sessions')
        .selectAll()
        .where('admin_token_id', '=', t.id)
        .execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.session_hash, createHash('sha256').update(value).digest('hex'));
      assert.ok(!JSON.stringify(rows).includes(value));

      const projects = await withCookie(cookie, 'GET', '/projects');
      assert.equal(projects.status, 200, projects.text);
      assert.equal(projects.headers.get('cache-control'), 'no-store');
      const who = await withCookie(cookie, 'GET', '/session');
      assert.deepEqual(who.body, body);
      // A state-changing route, from the dashboard's own origin.
      const slug = `ses-${Math.random().toString(36).slice(2, 10)}`;
      const created = await withCookie(cookie, 'POST', '/projects', { body: { slug } });
      assert.equal(created.status, 201, created.text);
      // With a bearer token, GET /session names the token and no session.
      const bearer = await h.app.request('GET', '/admin/v1/session', {
        headers: { authorization: `Bearer ${t.token}` },
      });
      assert.deepEqual(bearer.body, { admin_token: { id: t.id, name: 'laptop', project: null }, session: null });
    });

    test('a project-limited token signs in to its project only', async () => {
      const own = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      const { cookie, body } = await signIn((await token(own.slug)).token);
      assert.equal(body.admin_token.project, own.slug);
      assert.equal((await withCookie(cookie, 'GET', `/projects/${own.slug}`)).status, 200);
      assertDetail(await withCookie(cookie, 'GET', `/projects/${other.slug}`), 404, `No project '${other.slug}'.`);
    });

    test('a wrong token signs nobody in and sets no cookie', async () => {
      for (const [bad, detail] of [
        [`barge_at_${'A'.repeat(32)}`, 'Invalid admin token.'],
        ['barge_at_short', 'That is not an admin token: one is barge_at_ followed by 32 letters and digits.'],
      ] as const) {
        const res = await h.app.request('POST', '/admin/v1/session', { body: { token: bad }, headers: sameOrigin() });
        assertDetail(res, 401, detail);
        assert.deepEqual(res.headers.getSetCookie(), []);
      }
      const revoked = await token();
      assert.ok((await revokeAdminToken(deps(), { id: revoked.id })).ok);
      assertDetail(
        await h.app.request('POST', '/admin/v1/session', { body: { token: revoked.token }, headers: sameOrigin() }),
        401,
        'Invalid admin token.',
      );
    });

    test('signing out ends the session from the next request on and clears the cookie', async () => {
      const { cookie } = await signIn((await token()).token);
      const out = await withCookie(cookie, 'DELETE', '/session');
      assert.equal(out.status, 204, out.text);
      const cleared = out.headers.getSetCookie()[0] ?? '';
      assert.match(cleared, /^barge_session=;/);
      assert.match(cleared, /Expires=Thu, 01 Jan 1970/);
      assertDetail(await withCookie(cookie, 'GET', '/projects'), 401, SESSION_ENDED);
      // Signing out again is answered as any ended session is.
      assertDetail(await withCookie(cookie, 'DELETE', '/session'), 401, SESSION_ENDED);
    });

    test('a session unused for the idle timeout ends; each use (recorded at most once a minute) keeps it alive', async () => {
      const { cookie } = await signIn((await token()).token);
      clock.advance(IDLE_MS - 1000);
      assert.equal((await withCookie(cookie, 'GET', '/projects')).status, 200);
      // That use moved the idle expiry: another almost-idle stretch is fine.
      clock.advance(IDLE_MS - 1000);
      const who = await withCookie(cookie, 'GET', '/session');
      assert.equal(who.status, 200);
      assert.equal(who.body.session.idle_expires_at, new Date(clock.now() + IDLE_MS).toISOString());
      // A use within a minute of the last recorded one is not written: the expiry stays put.
      clock.advance(30_000);
      assert.equal((await withCookie(cookie, 'GET', '/projects')).status, 200);
      clock.advance(IDLE_MS - 30_000);
      assertDetail(await withCookie(cookie, 'GET', '/projects'), 401, SESSION_ENDED);

      // Without any use, it ends at sign-in plus the idle timeout exactly.
      const fresh = await signIn((await token()).token);
      clock.advance(IDLE_MS - 1);
      assert.equal((await withCookie(fresh.cookie, 'GET', '/session')).status, 200);
      const again = await signIn((await token()).token);
      clock.advance(IDLE_MS);
      assertDetail(await withCookie(again.cookie, 'GET', '/session'), 401, SESSION_ENDED);
    });

    test('a busy session still ends at its absolute lifetime', async () => {
      const { cookie } = await signIn((await token()).token);
      const start = clock.now();
      while (clock.now() + IDLE_MS / 2 < start + ABSOLUTE_MS) {
        clock.advance(IDLE_MS / 2);
        assert.equal((await withCookie(cookie, 'GET', '/projects')).status, 200, `at +${clock.now() - start} ms`);
      }
      clock.set(start + ABSOLUTE_MS - 1);
      const last = await withCookie(cookie, 'GET', '/session');
      assert.equal(last.status, 200);
      // The idle expiry never runs past the absolute end.
      assert.equal(last.body.session.idle_expires_at, new Date(start + ABSOLUTE_MS).toISOString());
      clock.set(start + ABSOLUTE_MS);
      assertDetail(await withCookie(cookie, 'GET', '/projects'), 401, SESSION_ENDED);
    });

    test("revoking the admin token ends its sessions on the very next request; another token's session goes on", async () => {
      const doomed = await token();
      const kept = await token();
      const a = await signIn(doomed.token);
      const b = await signIn(kept.token);
      assert.equal((await withCookie(a.cookie, 'GET', '/projects')).status, 200);
      assert.ok((await revokeAdminToken(deps(), { id: doomed.id })).ok);
      assertDetail(await withCookie(a.cookie, 'GET', '/projects'), 401, SESSION_ENDED);
      assertDetail(
        await withCookie(a.cookie, 'POST', '/projects', { body: { slug: 'never-made-a' } }),
        401,
        SESSION_ENDED,
      );
      assert.equal((await withCookie(b.cookie, 'GET', '/projects')).status, 200);
    });

    test('a state-changing request with the cookie from another origin is refused with 403 and changes nothing', async () => {
      const { cookie } = await signIn((await token()).token);
      const slug = `xs-${Math.random().toString(36).slice(2, 10)}`;
      const host = new URL(h.app.url).host;
      const cases: [Record<string, string>, string][] = [
        [
          { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
          "its Sec-Fetch-Site header is 'cross-site', not 'same-origin'",
        ],
        [
          { 'sec-fetch-site': 'same-site', origin: h.app.url },
          "its Sec-Fetch-Site header is 'same-site', not 'same-origin'",
        ],
        [
          { origin: 'https://evil.example' },
          `its Origin 'https://evil.example' is neither the host it was sent to (${host}) nor the service's public address (http://localhost:8080)`,
        ],
        [{ origin: 'null' }, "its Origin 'null' is not a web origin"],
        [{}, 'it carries neither an Origin nor a Sec-Fetch-Site header'],
      ];
      for (const [headers, reason] of cases) {
        for (const [method, path, body] of [
          ['POST', '/projects', { slug }],
          ['DELETE', '/session', undefined],
        ] as const) {
          const res = await h.app.request(method, `/admin/v1${path}`, {
            headers: { cookie, ...headers },
            ...(body === undefined ? {} : { body }),
          });
          assertDetail(res, 403, crossSite(reason));
        }
      }
      // Nothing was made, and the session was not signed out.
      assertDetail(await withCookie(cookie, 'GET', `/projects/${slug}`), 404, `No project '${slug}'.`);
      assert.equal((await withCookie(cookie, 'GET', '/session')).status, 200);
      // Only Sec-Fetch-Site (no Origin) from the same origin passes, as does only Origin.
      assert.equal(
        (
          await h.app.request('POST', '/admin/v1/projects', {
            headers: { cookie, 'sec-fetch-site': 'same-origin' },
            body: { slug },
          })
        ).status,
        201,
      );
      const second = `${slug}-2`;
      assert.equal(
        (
          await h.app.request('POST', '/admin/v1/projects', {
            headers: { cookie, origin: h.app.url },
            body: { slug: second },
          })
        ).status,
        201,
      );
      // A bearer token is not a browser's ambient credential: no origin rule applies to it.
      const bearer = await h.app.request('POST', '/admin/v1/projects', {
        headers: {
          authorization: `Bearer ${(await token()).token}`,
          origin: 'https://evil.example',
          'sec-fetch-site': 'cross-site',
        },
        body: { slug: `${slug}-3` },
      });
      assert.equal(bearer.status, 201, bearer.text);
    });

    test('signing in from another origin is refused: no session, no cookie', async () => {
      const t = await token();
      const res = await h.app.request('POST', '/admin/v1/session', {
        body: { token: t.token },
        headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      });
      assertDetail(res, 403, crossSite("its Sec-Fetch-Site header is 'cross-site', not 'same-origin'"));
      assert.deepEqual(res.headers.getSetCookie(), []);
      const rows = await h.db.database.read
        .selectFrom('admin_sessions')
        .select('id')
        .where('admin_token_id', '=', t.id)
        .execute();
      assert.deepEqual(rows, []);
    });

    test('the cookie means nothing to the cargo API, and nothing of the admin scope answers there', async () => {
      const { cookie } = await signIn((await token()).token);
      const res = await h.app.request('GET', `/cargo/crg_${'0'.repeat(26)}/tracking`, { headers: { cookie } });
      assertDetail(res, 401, 'Missing API key. Include the X-API-Key header.');
      assert.equal(res.headers.get('content-security-policy'), null);
      assert.equal(res.headers.get('cache-control'), null);
      assert.deepEqual(res.headers.getSetCookie(), []);
    });

    test('/openapi.json documents the session routes and the cookie scheme', async () => {
      const doc = (await h.app.request('GET', '/openapi.json')).body;
      assert.deepEqual(doc.components.securitySchemes.dashboardSession, {
        type: 'apiKey',
        in: 'cookie',
        name: 'barge_session',
        description: doc.components.securitySchemes.dashboardSession.description,
      });
      const session = doc.paths['/admin/v1/session'];
      assert.deepEqual(Object.keys(session).sort(), ['delete', 'get', 'post']);
      assert.deepEqual(session.post.security, []);
      assert.ok(session.post.responses['403']);
      assert.deepEqual(doc.paths['/admin/v1/projects'].get.security, [{ adminToken: [] }, { dashboardSession: [] }]);
    });
  });
}

for (const backend of (await backends()).slice(0, 1)) {
  describe(`the session cookie behind an https public address on ${backend.name}`, () => {
    const h = harness(backend, { config: { publicBaseUrl: 'https://barge.example.com' } });
    test('is Secure, and the public address is an origin of its own (a proxy in front may send another Host)', async () => {
      const made = await createAdminToken({ database: h.db.database, clock: new ManualClock() }, { name: 'x' });
      assert.ok(made.ok);
      const res = await h.app.request('POST', '/admin/v1/session', {
        body: { token: made.value.token },
        headers: { origin: h.app.url, 'sec-fetch-site': 'same-origin' },
      });
      assert.equal(res.status, 201, res.text);
      const setCookie = res.headers.getSetCookie()[0] ?? '';
      assert.match(setCookie, /; Secure/);
      const cookie = setCookie.split(';')[0] as string;
      const created = await h.app.request('POST', '/admin/v1/projects', {
        headers: { cookie, origin: 'https://barge.example.com', 'sec-fetch-site': 'same-origin' },
        body: { slug: `pub-${Math.random().toString(36).slice(2, 10)}` },
      });
      assert.equal(created.status, 201, created.text);
      const other = await h.app.request('POST', '/admin/v1/projects', {
        headers: { cookie, origin: 'https://barge.example.com:8443' },
        body: { slug: `pub-${Math.random().toString(36).slice(2, 10)}` },
      });
      assert.equal(other.status, 403, other.text);
    });
  });
}
