import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_REPORTED_ERRORS } from '../../src/domain/errors.js';
import { createProjectWithKey, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

/**
 * Bodies built to make validation expensive: many invalid items must cost time linear in the body
 * and an answer of bounded size (the first few dozen problems and a count). Before, 100,000 wrong
 * messages (200 KB) took 51 s to answer and held the event loop all that time; the time bounds
 * here are generous guards against that, not measurements (bench/ measures).
 */
for (const backend of await backends()) {
  describe(`hostile request bodies on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let key: string;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, { config: { bodyLimitBytes: 11 * 1024 * 1024 } });
      key = (await createProjectWithKey(db.database)).key;
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    const invalidMessages = (n: number) =>
      `{"params":{"model":"svc-mock","messages":[${Array(n).fill('1').join(',')}]}}`;

    test('100,000 invalid items: the first problems and how many more, answered at once', async () => {
      const started = Date.now();
      const res = await app.request('POST', '/cargo/load', {
        key,
        rawBody: invalidMessages(100_000),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400, res.text.slice(0, 300));
      assert.equal(res.body.errors.length, MAX_REPORTED_ERRORS);
      assert.match(
        res.body.detail,
        /^Invalid request body: \/params\/messages\/0 must be object \(and 99999 more\)\.$/,
      );
      assert.ok(res.text.length < 10_000, `the answer is ${res.text.length} bytes`);
      assert.ok(Date.now() - started < 10_000, `it took ${Date.now() - started} ms`);
    });

    test('a 10 MiB body of invalid items reports its first problem and leaves the service answering', async () => {
      const body = invalidMessages(5_300_000);
      assert.ok(body.length > 10 * 1024 * 1024 - 100);
      const health = (async () => {
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const t = Date.now();
          assert.equal((await app.request('GET', '/health')).status, 200);
          times.push(Date.now() - t);
        }
        return times;
      })();
      const started = Date.now();
      const res = await app.request('POST', '/cargo/load', {
        key,
        rawBody: body,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors.length, 1);
      assert.deepEqual(res.body.errors[0], { path: '/params/messages/0', message: 'must be object' });
      assert.ok(Date.now() - started < 10_000, `it took ${Date.now() - started} ms`);
      assert.equal((await health).length, 5);
    });
  });
}
