/**
 * The admin API (/admin/v1/) on every backend: each route, its answers and its authorization (no
 * token, malformed, unknown, revoked: 401; a project-limited token on another project: the 404 an
 * unknown slug gets; creating a project: 403), revocation on the very next request, the key it
 * makes working against POST /cargo/load until deactivated, secrets shown once, and /openapi.json.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { adminClient, assertOtherProjectHidden, assertTokenRequired } from '../helpers/admin.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { assertDetail, assertInvalidField } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const TOKEN = /^barge_at_[A-Za-z0-9]{32}$/;

for (const backend of await backends()) {
  describe(`the admin API on ${backend.name}`, () => {
    const h = harness(backend);
    const admin = adminClient(h);
    const token = admin.token;
    const call = admin.call;

    /** Every route of the slice, for a project slug (and one of its key ids). */
    const routes = (slug: string, keyId = 'key_x'): [string, string, unknown?][] => [
      ['GET', '/projects'],
      ['POST', '/projects', { slug: 'never-made' }],
      ['GET', `/projects/${slug}`],
      ['POST', `/projects/${slug}/activate`],
      ['POST', `/projects/${slug}/deactivate`],
      ['POST', `/projects/${slug}/webhook-secret/rotate`],
      ['PATCH', `/projects/${slug}`, { rate_limit_max: 5 }],
      ['GET', `/projects/${slug}/keys`],
      ['POST', `/projects/${slug}/keys`, { name: 'x' }],
      ['POST', `/projects/${slug}/keys/${keyId}/deactivate`],
    ];

    test('every route refuses a missing, malformed, unknown or revoked token with 401 and a detail, changing nothing', async () => {
      const { slug, keyId } = await createProjectWithKey(h.db.database);
      await assertTokenRequired(admin, routes(slug, keyId));
      const { body } = await call('GET', `/projects/${slug}`, (await token()).token);
      assert.equal(body.status, 'active');
      assert.equal(body.rate_limit_max, null);
      assert.equal((await call('GET', `/projects/${slug}/keys`, (await token()).token)).body.data[0].is_active, true);
    });

    test('a project-limited token sees its project only: every route on another project is the 404 of an unknown slug; creating a project is 403', async () => {
      const own = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      const limited = await token(own.slug);
      const onOther = routes(other.slug, other.keyId).filter(([, path]) => path !== '/projects');
      await assertOtherProjectHidden(admin, limited.token, onOther, other.slug);
      // The other project is untouched.
      const all = await token();
      const seen = (await call('GET', `/projects/${other.slug}`, all.token)).body;
      assert.equal(seen.status, 'active');
      assert.equal(seen.rate_limit_max, null);
      assert.equal((await call('GET', `/projects/${other.slug}/keys`, all.token)).body.data[0].is_active, true);

      const list = await call('GET', '/projects', limited.token);
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.data.map((p: { slug: string }) => p.slug),
        [own.slug],
      );
      assertDetail(
        await call('POST', '/projects', limited.token, { slug: 'by-limited' }),
        403,
        'This admin token is limited to one project; creating a project needs an all-projects token.',
      );
      assert.equal((await call('GET', '/projects/by-limited', all.token)).status, 404);
      // Its own project: served.
      assert.equal((await call('GET', `/projects/${own.slug}`, limited.token)).status, 200);
      assert.equal((await call('GET', `/projects/${own.slug}/keys`, limited.token)).status, 200);
    });

    test('revoking a token refuses it on the very next request', async () => {
      const t = await token();
      assert.equal((await call('GET', '/projects', t.token)).status, 200);
      await admin.revoke(t.id);
      assertDetail(await call('GET', '/projects', t.token), 401, 'Invalid admin token.');
    });

    test('projects: create (the secret once), list with counts, show, activate, deactivate, rotate, patch', async () => {
      const all = (await token()).token;
      const slug = `adm-${Math.random().toString(36).slice(2, 10)}`;
      const created = await call('POST', '/projects', all, { slug });
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.webhook_secret, /^whsec_/);
      assert.equal(created.body.status, 'active');
      assert.deepEqual(created.body.cargo_counts, {});
      const taken = await call('POST', '/projects', all, { slug });
      assertDetail(taken, 409, { error: 'slug_taken', message: `Project '${slug}' already exists.` });
      assertInvalidField(await call('POST', '/projects', all, { slug: 'Not A Slug' }), '/slug');
      assertInvalidField(await call('POST', '/projects', all, {}), '/slug');

      // Cargo counts by status, and the secret never shown again.
      const { key } = await createKeyThroughApi(all, slug);
      assert.equal((await h.app.request('POST', '/cargo/load', { key, body: mockBody() })).status, 200);
      const shown = await call('GET', `/projects/${slug}`, all);
      assert.equal(shown.status, 200);
      assert.deepEqual(shown.body.cargo_counts, { pending: 1 });
      assert.equal(shown.body.webhook_secret, undefined);
      assert.ok(!shown.text.includes(created.body.webhook_secret));
      const listed = await call('GET', '/projects', all);
      const entry = listed.body.data.find((p: { slug: string }) => p.slug === slug);
      assert.deepEqual(entry, shown.body);
      assert.ok(!listed.text.includes('whsec_'));

      const off = await call('POST', `/projects/${slug}/deactivate`, all);
      assert.equal(off.body.status, 'inactive');
      assertDetail(await h.app.request('POST', '/cargo/load', { key, body: mockBody() }), 403, 'Project is inactive.');
      const on = await call('POST', `/projects/${slug}/activate`, all);
      assert.equal(on.body.status, 'active');
      assert.equal((await h.app.request('POST', '/cargo/load', { key, body: mockBody() })).status, 200);

      const rotated = await call('POST', `/projects/${slug}/webhook-secret/rotate`, all);
      assert.equal(rotated.status, 200, rotated.text);
      assert.match(rotated.body.webhook_secret, /^whsec_/);
      assert.notEqual(rotated.body.webhook_secret, created.body.webhook_secret);
      assert.ok(Date.parse(rotated.body.previous_secret_valid_until) > Date.now());
      assert.equal(rotated.body.project.slug, slug);
      assert.ok(!(await call('GET', `/projects/${slug}`, all)).text.includes(rotated.body.webhook_secret));

      const patched = await call('PATCH', `/projects/${slug}`, all, {
        notification_email: 'ops@example.com',
        rate_limit_max: 600,
        storage_budget: { daily_bytes: 1000000 },
        allowed_models: ['svc-*'],
        spend_budget: { mode: 'own', monthly_usd: 25, daily_usd: 2 },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.notification_email, 'ops@example.com');
      assert.equal(patched.body.rate_limit_max, 600);
      assert.deepEqual(patched.body.storage_budget, { daily_bytes: 1000000, held_bytes: null });
      assert.deepEqual(patched.body.allowed_models, ['svc-*']);
      assert.deepEqual(patched.body.spend_budget, { mode: 'own', monthly_usd: 25, daily_usd: 2 });
      // The rate limit reaches the cargo API at once.
      const limited = await h.app.request('GET', '/models', { key });
      assert.equal(limited.headers.get('ratelimit-limit'), '600');

      // A refusal changes nothing, whichever field it is about.
      for (const [body, path] of [
        [{ rate_limit_max: 1, notification_email: 'not-an-address' }, '/notification_email'],
        [{ rate_limit_max: 1, allowed_models: ['bad[pattern'] }, '/allowed_models'],
        [{ rate_limit_max: 0 }, '/rate_limit_max'],
        [{ storage_budget: { held_bytes: -1 } }, '/storage_budget/held_bytes'],
        [{ spend_budget: { mode: 'own' } }, '/spend_budget'],
        [{ bogus: 1 }, '/bogus'],
      ] as const) {
        const res = await call('PATCH', `/projects/${slug}`, all, body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.ok(
          res.body.errors.some((e: { path: string }) => e.path.startsWith(path)),
          `${JSON.stringify(body)}: ${res.text}`,
        );
      }
      assert.equal((await call('PATCH', `/projects/${slug}`, all, {})).status, 400);
      assert.deepEqual((await call('GET', `/projects/${slug}`, all)).body.rate_limit_max, 600);
      // null returns each to its default.
      const reset = await call('PATCH', `/projects/${slug}`, all, {
        notification_email: null,
        rate_limit_max: null,
        storage_budget: { daily_bytes: null },
        allowed_models: null,
        spend_budget: { mode: 'default' },
      });
      assert.equal(reset.status, 200, reset.text);
      assert.equal(reset.body.notification_email, null);
      assert.equal(reset.body.rate_limit_max, null);
      assert.deepEqual(reset.body.storage_budget, { daily_bytes: null, held_bytes: null });
      assert.equal(reset.body.allowed_models, null);
      assert.equal(reset.body.spend_budget.mode, 'default');
      assertDetail(
        await call('PATCH', '/projects/no-such-project', all, { rate_limit_max: 5 }),
        404,
        "No project 'no-such-project'.",
      );
    });

    async function createKeyThroughApi(bearer: string, slug: string) {
      const res = await call('POST', `/projects/${slug}/keys`, bearer, { name: 'made by admin' });
      assert.equal(res.status, 201, res.text);
      return res.body as { id: string; key: string; key_prefix: string };
    }

    test('API keys: created (the key once) works against POST /cargo/load, listed without the key, refused on the next request after deactivation', async () => {
      const { slug } = await createProjectWithKey(h.db.database);
      const limited = (await token(slug)).token;
      const made = await createKeyThroughApi(limited, slug);
      assert.match(made.key, /^barge_sk_[A-Za-z0-9]{32}$/);
      assert.equal(made.key_prefix, made.key.slice(0, 12));
      assert.equal((await h.app.request('POST', '/cargo/load', { key: made.key, body: mockBody() })).status, 200);

      const listed = await call('GET', `/projects/${slug}/keys`, limited);
      assert.equal(listed.status, 200);
      assert.ok(!listed.text.includes(made.key));
      const entry = listed.body.data.find((k: { id: string }) => k.id === made.id);
      assert.deepEqual(Object.keys(entry).sort(), [
        'created_at',
        'expires_at',
        'id',
        'is_active',
        'key_prefix',
        'last_used_at',
        'name',
      ]);
      assert.equal(entry.is_active, true);
      assert.equal(entry.key, undefined);

      const off = await call('POST', `/projects/${slug}/keys/${made.id}/deactivate`, limited);
      assert.equal(off.status, 200, off.text);
      assert.equal(off.body.is_active, false);
      assertDetail(
        await h.app.request('POST', '/cargo/load', { key: made.key, body: mockBody() }),
        401,
        'Invalid API key.',
      );

      // A key of another project, named under this one, is not found (and stays active).
      const other = await createProjectWithKey(h.db.database);
      const all = (await token()).token;
      const cross = await call('POST', `/projects/${slug}/keys/${other.keyId}/deactivate`, all);
      assertDetail(cross, 404, `No key '${other.keyId}'.`);
      assert.equal((await h.app.request('GET', '/models', { key: other.key })).status, 200);

      // Refusals: an empty name, a past expiry, an unknown key.
      assertInvalidField(await call('POST', `/projects/${slug}/keys`, limited, { name: '' }), '/name');
      assertInvalidField(
        await call('POST', `/projects/${slug}/keys`, limited, { name: 'x', expires_at: '2020-01-01' }),
        '/expires_at',
      );
      const future = await call('POST', `/projects/${slug}/keys`, limited, { name: 'x', expires_at: '2999-01-01' });
      assert.equal(future.body.expires_at, '2999-01-01T00:00:00.000Z');
      assertDetail(
        await call('POST', `/projects/${slug}/keys/key_none/deactivate`, limited),
        404,
        "No key 'key_none'.",
      );
    });

    test('/openapi.json documents every admin route with the bearer scheme, examples and its answers', async () => {
      const doc = (await h.app.request('GET', '/openapi.json')).body;
      assert.deepEqual(doc.components.securitySchemes.adminToken, {
        type: 'http',
        scheme: 'bearer',
        description: doc.components.securitySchemes.adminToken.description,
      });
      const expected = {
        '/admin/v1/projects': ['get', 'post'],
        '/admin/v1/projects/{slug}': ['get', 'patch'],
        '/admin/v1/projects/{slug}/activate': ['post'],
        '/admin/v1/projects/{slug}/deactivate': ['post'],
        '/admin/v1/projects/{slug}/webhook-secret/rotate': ['post'],
        '/admin/v1/projects/{slug}/keys': ['get', 'post'],
        '/admin/v1/projects/{slug}/keys/{key_id}/deactivate': ['post'],
        '/admin/v1/projects/{slug}/connections': ['get', 'post'],
        '/admin/v1/projects/{slug}/connections/{connection_id}': ['get', 'delete'],
        '/admin/v1/projects/{slug}/connections/{connection_id}/check': ['post'],
        '/admin/v1/projects/{slug}/cargo': ['get'],
        '/admin/v1/projects/{slug}/cargo/{cargo_id}': ['get'],
        '/admin/v1/projects/{slug}/cargo/{cargo_id}/redeliver': ['post'],
        '/admin/v1/projects/{slug}/recoveries/dry-run': ['post'],
        '/admin/v1/projects/{slug}/recoveries': ['get', 'post'],
        '/admin/v1/projects/{slug}/recoveries/{recovery_id}': ['get'],
        '/admin/v1/projects/{slug}/recoveries/{recovery_id}/cancel': ['post'],
        '/admin/v1/projects/{slug}/usage': ['get'],
        '/admin/v1/providers': ['get'],
      };
      for (const [path, methods] of Object.entries(expected)) {
        for (const method of methods) {
          const op = doc.paths[path]?.[method];
          assert.ok(op, `${method} ${path} is documented`);
          assert.deepEqual(op.security, [{ adminToken: [] }, { dashboardSession: [] }], `${method} ${path}`);
          assert.ok(op.responses['401'], `${method} ${path} 401`);
          const ok = op.responses['200'] ?? op.responses['201'];
          // @fastify/swagger lifts a schema's example to the media type's.
          assert.ok(ok.content['application/json'].example, `${method} ${path} example`);
          if (path.includes('{slug}')) assert.ok(op.responses['404'], `${method} ${path} 404`);
        }
      }
      assert.ok(doc.paths['/admin/v1/projects'].post.responses['403']);
      assert.ok(doc.paths['/admin/v1/providers'].get.responses['403']);
      assert.ok(doc.paths['/admin/v1/projects/{slug}/cargo/{cargo_id}/redeliver'].post.responses['409']);
      assert.ok(doc.paths['/admin/v1/projects/{slug}/connections/{connection_id}/check'].post.responses['429']);
      assert.ok(doc.paths['/admin/v1/projects/{slug}/recoveries/{recovery_id}/cancel'].post.responses['409']);
      for (const path of ['/admin/v1/projects/{slug}/connections', '/admin/v1/projects/{slug}/recoveries']) {
        assert.ok(doc.paths[path].post.requestBody.content['application/json'].example, path);
      }
      assert.ok(doc.paths['/admin/v1/projects/{slug}'].patch.requestBody.content['application/json'].example);
    });
  });
}

test('an admin token matches the pinned format', async () => {
  const { generateAdminToken } = await import('../../src/domain/admin-tokens.js');
  assert.match(generateAdminToken(), TOKEN);
});
