/**
 * Idempotency-Key on POST /cargo/load on every backend: a retry answers the first cargo and creates
 * nothing, even ten at once; another body is 422; keys are per project, kept 24 hours, and a bad
 * key is a 400. On PostgreSQL, two API services (each its own group commit) share the keys.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { purgeIdempotencyKeys } from '../../src/store/idempotency-keys.js';
import { createProjectWithKey, mockBody, startTestApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const DAY = 24 * 3_600_000;

for (const backend of await backends()) {
  describe(`Idempotency-Key on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const h = harness(backend, { clock });
    const load = (app: TestApp, key: string, idempotencyKey: string | undefined, body: unknown) =>
      app.request('POST', '/cargo/load', {
        key,
        body,
        ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }),
      });
    const cargoCount = async (projectId: string) =>
      Number(
        (
          await h.db.database.read
            .selectFrom('cargo')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('project_id', '=', projectId)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('the same key and body answers the first answer and creates nothing; another body is 422', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const first = await load(h.app, key, 'order-1', mockBody('one'));
      assert.equal(first.status, 200, first.text);
      const again = await load(h.app, key, 'order-1', mockBody('one'));
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, first.body);
      const other = await load(h.app, key, 'order-1', mockBody('two'));
      assert.equal(other.status, 422);
      assert.deepEqual(Object.keys(other.body.detail).sort(), ['error', 'message']);
      assert.equal(other.body.detail.error, 'idempotency_key_reused');
      assert.equal(await cargoCount(projectId), 1);
      // Without the header nothing changes: the same body makes a new cargo each time.
      const plain1 = await load(h.app, key, undefined, mockBody('one'));
      const plain2 = await load(h.app, key, undefined, mockBody('one'));
      assert.notEqual(plain1.body.cargo_id, plain2.body.cargo_id);
      assert.equal(await cargoCount(projectId), 3);
    });

    test('ten identical requests at once create one cargo and all answer it', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const answers = await Promise.all(Array.from({ length: 10 }, () => load(h.app, key, 'burst', mockBody('burst'))));
      for (const res of answers) assert.equal(res.status, 200, res.text);
      const ids = new Set(answers.map((r) => r.body.cargo_id));
      assert.equal(ids.size, 1);
      assert.equal(await cargoCount(projectId), 1);
      // Alongside them, other cargo in the same group commits are unaffected.
      const mixed = await Promise.all([
        ...Array.from({ length: 5 }, () => load(h.app, key, 'burst-2', mockBody('b2'))),
        ...Array.from({ length: 5 }, (_, i) => load(h.app, key, undefined, mockBody(`free ${i}`))),
      ]);
      for (const res of mixed) assert.equal(res.status, 200, res.text);
      assert.equal(new Set(mixed.slice(0, 5).map((r) => r.body.cargo_id)).size, 1);
      assert.equal(new Set(mixed.map((r) => r.body.cargo_id)).size, 6);
      assert.equal(await cargoCount(projectId), 7);
    });

    test('keys are per project', async () => {
      const a = await createProjectWithKey(h.db.database);
      const b = await createProjectWithKey(h.db.database);
      const ra = await load(h.app, a.key, 'shared', mockBody('x'));
      const rb = await load(h.app, b.key, 'shared', mockBody('y'));
      assert.equal(rb.status, 200);
      assert.notEqual(ra.body.cargo_id, rb.body.cargo_id);
    });

    test('a key is kept 24 hours, then it is free again and purged', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const first = await load(h.app, key, 'daily', mockBody('d'));
      clock.advance(DAY - 1000);
      assert.deepEqual((await load(h.app, key, 'daily', mockBody('d'))).body, first.body);
      assert.equal((await load(h.app, key, 'daily', mockBody('other'))).status, 422);
      const old = await load(h.app, key, 'old-key', mockBody('o'));
      clock.advance(2000);
      const fresh = await load(h.app, key, 'daily', mockBody('other'));
      assert.equal(fresh.status, 200, fresh.text);
      assert.notEqual(fresh.body.cargo_id, first.body.cargo_id);
      assert.equal(await cargoCount(projectId), 3);
      clock.advance(DAY);
      assert.ok((await purgeIdempotencyKeys(h.db.database, clock.now(), 1000)) >= 2);
      const left = await h.db.database.read
        .selectFrom('idempotency_keys')
        .select('key')
        .where('project_id', '=', projectId)
        .execute();
      assert.deepEqual(left, []);
      assert.equal(old.status, 200);
    });

    test('a malformed key is a 400 naming the header; nothing is created', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      for (const bad of ['', 'x'.repeat(256), 'tab\there', 'é']) {
        const res = await h.app
          .request('POST', '/cargo/load', {
            key,
            body: mockBody(),
            headers: { 'idempotency-key': bad },
          })
          .catch(() => null);
        // fetch itself refuses some header values (non-ASCII); the server is checked with the rest.
        if (res === null) continue;
        assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
        assert.equal(res.body.errors[0].path, 'Idempotency-Key');
      }
      assert.equal((await load(h.app, key, 'x'.repeat(255), mockBody())).status, 200);
      assert.equal(await cargoCount(projectId), 1);
    });

    if (backend.name === 'postgres') {
      describe('two API services over one database', () => {
        let second: TestApp;
        before(async () => {
          second = await startTestApp(h.db.database, { clock });
        });
        after(async () => {
          await second.close();
        });
        test('identical requests spread over two API services (two group commits) create one cargo', async () => {
          const { key, projectId } = await createProjectWithKey(h.db.database);
          const answers = await Promise.all(
            Array.from({ length: 10 }, (_, i) => load(i % 2 ? h.app : second, key, 'two-apis', mockBody('t'))),
          );
          for (const res of answers) assert.equal(res.status, 200, res.text);
          assert.equal(new Set(answers.map((r) => r.body.cargo_id)).size, 1);
          assert.equal(await cargoCount(projectId), 1);
        });
      });
    }
  });
}
