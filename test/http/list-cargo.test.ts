/** GET /cargo on every backend: newest first, filters, cursor pages that stay valid while cargo arrive, and 400s. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { createProjectWithKey, loadCargo, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

for (const backend of await backends()) {
  describe(`GET /cargo on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const h = harness(backend, { clock });
    const list = (key: string, query = '') => h.app.request('GET', `/cargo${query}`, { key });

    test('every page in turn, newest first, while new cargo arrive between pages', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      await loadCargo(h.app, other.key, mockBody('not mine'));
      const loaded: string[] = [];
      for (let i = 0; i < 25; i++) {
        clock.advance(1);
        loaded.push(await loadCargo(h.app, key, mockBody(`c${i}`)));
      }
      const seen: string[] = [];
      let after: string | null = null;
      for (let page = 0; ; page++) {
        const res = await list(key, `?limit=10${after ? `&after=${after}` : ''}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.body).sort(), ['data', 'has_more', 'last_id']);
        seen.push(...res.body.data.map((c: { cargo_id: string }) => c.cargo_id));
        assert.equal(res.body.last_id, res.body.data.at(-1)?.cargo_id ?? null);
        // New cargo arrive while the client pages: they sort above every page already read.
        clock.advance(1);
        await loadCargo(h.app, key, mockBody(`arrived during page ${page}`));
        if (!res.body.has_more) break;
        after = res.body.last_id;
        assert.ok(page < 5, 'pages end');
      }
      assert.deepEqual(seen, [...loaded].reverse());
      const first = (await list(key, '?limit=1')).body.data[0];
      assert.deepEqual(Object.keys(first).sort(), [
        'cargo_id',
        'created_at',
        'metadata',
        'status',
        'status_description',
        'updated_at',
      ]);
      assert.equal(first.status, 'pending');
      assert.equal(first.metadata, null, 'a cargo loaded without metadata lists null');
      assert.equal(first.status_description, 'Waiting to be assigned to a batch');
      assert.equal((await list(key)).body.data.length, 28);
    });

    test('filters: status, model, created_after and created_before (exclusive), combined', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      clock.advance(60_000);
      const t0 = clock.now();
      const early = await loadCargo(h.app, key, mockBody('early'));
      clock.advance(1000);
      const middle = await loadCargo(h.app, key, mockBody('middle'));
      clock.advance(1000);
      const late = await loadCargo(h.app, key, mockBody('late'));
      assert.equal((await h.app.request('POST', `/cargo/${middle}/cancel`, { key })).status, 200);
      const ids = async (query: string) => {
        const res = await list(key, query);
        assert.equal(res.status, 200, res.text);
        return res.body.data.map((c: { cargo_id: string }) => c.cargo_id);
      };
      assert.deepEqual(await ids('?status=canceled'), [middle]);
      assert.deepEqual(await ids('?status=pending'), [late, early]);
      assert.deepEqual(await ids('?model=svc-mock'), [late, middle, early]);
      assert.deepEqual(await ids('?model=gpt-4o'), []);
      const iso = (ms: number) => new Date(ms).toISOString();
      assert.deepEqual(await ids(`?created_after=${iso(t0)}`), [late, middle]);
      assert.deepEqual(await ids(`?created_before=${iso(t0 + 2000)}`), [middle, early]);
      assert.deepEqual(await ids(`?created_after=${iso(t0 - 1)}&created_before=${iso(t0 + 1000)}`), [early]);
      assert.deepEqual(await ids(`?status=pending&created_after=${iso(t0)}&model=svc-mock`), [late]);
      // An offset instead of Z names the same instant.
      assert.deepEqual(
        await ids(`?created_after=${encodeURIComponent('2026-11-22T14:00:00+02:00')}&limit=1000`).then((l) => l.length),
        3,
      );
    });

    test('bad input is a 400 naming each parameter', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      for (const [query, path] of [
        ['?limit=0', 'limit'],
        ['?limit=1001', 'limit'],
        ['?limit=ten', 'limit'],
        ['?status=lost', 'status'],
        ['?after=crg_x', 'after'],
        ['?created_after=yesterday', 'created_after'],
        ['?created_before=2026-13-45T00:00:00Z', 'created_before'],
        ['?created_after=2026-11-22T10:00:00', 'created_after'],
        ['?colour=blue', ''],
      ] as const) {
        const res = await list(key, query);
        assert.equal(res.status, 400, `${query}: ${res.text}`);
        assert.equal(typeof res.body.detail, 'string');
        assert.ok(Array.isArray(res.body.errors), query);
        if (path)
          assert.ok(
            res.body.errors.some((e: { path: string }) => e.path === path),
            `${query}: ${res.text}`,
          );
      }
      assert.equal((await h.app.request('GET', '/cargo', {})).status, 401);
    });
  });
}
