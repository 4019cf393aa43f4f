/** API-key authentication of the cargo routes on every backend: each refusal and its order, expiry, last_used_at. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { deactivateApiKey } from '../../src/store/admin/api-keys.js';
import { setProjectActive } from '../../src/store/admin/projects.js';
import { createProjectWithKey, mockBody, startTestApp, type TestApp } from '../helpers/app.js';
import { assertDetail } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { eventually, sleep } from '../helpers/wait.js';

const UNKNOWN_CARGO = 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c';
/** Every authenticated route, called with a valid body where one is needed. */
const ROUTES = [
  { method: 'POST', path: '/cargo/load', body: mockBody('hi') as unknown },
  { method: 'GET', path: `/cargo/${UNKNOWN_CARGO}/tracking`, body: undefined },
  { method: 'GET', path: `/cargo/${UNKNOWN_CARGO}/result`, body: undefined },
];
const INVALID_BODY = { params: { model: 'svc-mock', temperature: 7 } };
/** Well-formed (barge_sk_ + 32 of [A-Za-z0-9]) but never issued. */
const UNKNOWN_KEY = `barge_sk_${'A'.repeat(32)}`;

for (const backend of await backends()) {
  describe(`authentication on ${backend.name}`, () => {
    const h = harness(backend);

    const call = (route: (typeof ROUTES)[number], key: string | undefined, target: TestApp = h.app) =>
      target.request(route.method, route.path, { ...(key === undefined ? {} : { key }), body: route.body });
    const keyRow = (keyId: string) =>
      h.db.database.write.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();

    for (const route of ROUTES) {
      describe(`${route.method} ${route.path.replace(UNKNOWN_CARGO, '{cargo_id}')}`, () => {
        test('a valid key passes authentication', async () => {
          const { key } = await createProjectWithKey(h.db.database);
          const res = await call(route, key);
          // Past authentication: the load succeeds, the unknown cargo is not found.
          if (route.method === 'POST') assert.equal(res.status, 200, res.text);
          else assertDetail(res, 404, 'Cargo not found');
        });

        test('a missing header is 401 asking for X-API-Key', async () => {
          const res = await call(route, undefined);
          assert.equal(res.status, 401, res.text);
          assert.deepEqual(Object.keys(res.body), ['detail']);
          assert.match(res.body.detail, /include the X-API-Key header/i);
          assertDetail(await call(route, ''), 401, res.body.detail);
        });

        test('a malformed key is 401 "Invalid API key format."', async () => {
          const { key } = await createProjectWithKey(h.db.database);
          for (const bad of [
            'nonsense',
            key.slice(0, -1),
            `${key}x`,
            key.replace('barge_sk_', 'other_sk_'),
            `${key.slice(0, -1)}-`,
            ` ${key}x`,
          ]) {
            assertDetail(await call(route, bad), 401, 'Invalid API key format.');
          }
        });

        test('a well-formed unknown key is 401 "Invalid API key."', async () => {
          assertDetail(await call(route, UNKNOWN_KEY), 401, 'Invalid API key.');
        });

        test('a deactivated key is answered like an unknown key', async () => {
          const { key, keyId } = await createProjectWithKey(h.db.database);
          await deactivateApiKey(h.db.database, keyId);
          assertDetail(await call(route, key), 401, 'Invalid API key.');
        });

        test('an expired key is 401 "API key has expired."', async () => {
          const { key } = await createProjectWithKey(h.db.database, { expiresAt: Date.now() - 1000 });
          assertDetail(await call(route, key), 401, 'API key has expired.');
        });

        test('a key of an inactive project is 403 "Project is inactive."', async () => {
          const { key, slug } = await createProjectWithKey(h.db.database);
          await setProjectActive(h.db.database, slug, false, Date.now());
          assertDetail(await call(route, key), 403, 'Project is inactive.');
          await setProjectActive(h.db.database, slug, true, Date.now());
          assert.notEqual((await call(route, key)).status, 403, 'reactivation restores access');
        });
      });
    }

    test('expiry is checked against the clock: a key expiring now is expired, one a millisecond later is not', async () => {
      const clock = new ManualClock(Date.UTC(2027, 5, 1, 12));
      const clocked = await startTestApp(h.db.database, { clock });
      try {
        const now = clock.now();
        const expiring = await createProjectWithKey(h.db.database, { expiresAt: now });
        const later = await createProjectWithKey(h.db.database, { expiresAt: now + 1 });
        assertDetail(
          await clocked.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`, { key: expiring.key }),
          401,
          'API key has expired.',
        );
        assertDetail(
          await clocked.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`, { key: later.key }),
          404,
          'Cargo not found',
        );
        clock.advance(1);
        assertDetail(
          await clocked.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`, { key: later.key }),
          401,
          'API key has expired.',
        );
      } finally {
        await clocked.close();
      }
    });

    test('check order: deactivated before expired, expired before project inactive', async () => {
      const expiredOnInactive = await createProjectWithKey(h.db.database, { expiresAt: Date.now() - 1000 });
      await setProjectActive(h.db.database, expiredOnInactive.slug, false, Date.now());
      assertDetail(
        await call(ROUTES[1] as (typeof ROUTES)[number], expiredOnInactive.key),
        401,
        'API key has expired.',
      );

      const deactivatedExpired = await createProjectWithKey(h.db.database, { expiresAt: Date.now() - 1000 });
      await deactivateApiKey(h.db.database, deactivatedExpired.keyId);
      await setProjectActive(h.db.database, deactivatedExpired.slug, false, Date.now());
      assertDetail(await call(ROUTES[1] as (typeof ROUTES)[number], deactivatedExpired.key), 401, 'Invalid API key.');
    });

    test('authentication comes before the body: bad keys with invalid bodies are 401, inactive is 403', async () => {
      const { key, slug } = await createProjectWithKey(h.db.database);
      const post = (k: string | undefined, options: { body?: unknown; rawBody?: string; type?: string }) =>
        h.app.request('POST', '/cargo/load', {
          ...(k === undefined ? {} : { key: k }),
          ...(options.body === undefined ? {} : { body: options.body }),
          ...(options.rawBody === undefined ? {} : { rawBody: options.rawBody }),
          headers: { 'content-type': options.type ?? 'application/json' },
        });
      assertDetail(await post(UNKNOWN_KEY, { body: INVALID_BODY }), 401, 'Invalid API key.');
      assertDetail(await post('bad', { body: INVALID_BODY }), 401, 'Invalid API key format.');
      assert.equal((await post(undefined, { body: INVALID_BODY })).status, 401);
      assertDetail(await post(UNKNOWN_KEY, { rawBody: '{"params": ' }), 401, 'Invalid API key.');
      assertDetail(await post(UNKNOWN_KEY, { rawBody: '' }), 401, 'Invalid API key.');
      assertDetail(await post(UNKNOWN_KEY, { rawBody: 'hello', type: 'text/plain' }), 401, 'Invalid API key.');

      // The same bodies with the valid key are body errors.
      assert.equal((await post(key, { body: INVALID_BODY })).status, 400);
      assert.equal((await post(key, { rawBody: '{"params": ' })).status, 400);

      await setProjectActive(h.db.database, slug, false, Date.now());
      assertDetail(await post(key, { body: INVALID_BODY }), 403, 'Project is inactive.');
      assertDetail(await post(key, { rawBody: '{"params": ' }), 403, 'Project is inactive.');
    });

    test('a failed authentication stores nothing and does not touch the key', async () => {
      const { key, keyId, projectId, slug } = await createProjectWithKey(h.db.database);
      await setProjectActive(h.db.database, slug, false, Date.now());
      assert.equal((await h.app.request('POST', '/cargo/load', { key, body: mockBody('hi') })).status, 403);
      await sleep(50);
      assert.equal((await keyRow(keyId)).last_used_at, null);
      const rows = await h.db.database.write
        .selectFrom('cargo')
        .select('id')
        .where('project_id', '=', projectId)
        .execute();
      assert.equal(rows.length, 0);
    });

    test('last_used_at is set after a successful call and not rewritten within a minute', async () => {
      const clock = new ManualClock(Date.UTC(2027, 0, 10, 8, 0, 0, 123));
      const clocked = await startTestApp(h.db.database, { clock });
      try {
        const { key, keyId } = await createProjectWithKey(h.db.database);
        assert.equal((await keyRow(keyId)).last_used_at, null);
        const t0 = clock.now();
        const track = () => clocked.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`, { key });
        assert.equal((await track()).status, 404);
        await eventually(
          () => keyRow(keyId),
          (row) => row.last_used_at === t0,
        );

        clock.advance(59_999);
        assert.equal((await clocked.request('POST', '/cargo/load', { key, body: mockBody('hi') })).status, 200);
        assert.equal((await track()).status, 404);
        await sleep(100);
        assert.equal((await keyRow(keyId)).last_used_at, t0, 'not rewritten within a minute');

        clock.advance(1);
        assert.equal((await track()).status, 404);
        await eventually(
          () => keyRow(keyId),
          (row) => row.last_used_at === t0 + 60_000,
        );
      } finally {
        await clocked.close();
      }
    });

    test('every cargo route records last_used_at', async () => {
      for (const route of ROUTES) {
        const { key, keyId } = await createProjectWithKey(h.db.database);
        await call(route, key);
        const row = await eventually(
          () => keyRow(keyId),
          (r) => r.last_used_at !== null,
        );
        assert.ok(Math.abs((row.last_used_at ?? 0) - Date.now()) < 60_000);
      }
    });

    test('health and docs need no key', async () => {
      assert.equal((await h.app.request('GET', '/health')).status, 200);
      assert.equal((await h.app.request('GET', '/openapi.json')).status, 200);
    });
  });
}
