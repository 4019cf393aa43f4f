import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProjectWithKey, mockBody, startTestApp, storedCargo, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

for (const backend of await backends()) {
  describe(`POST /cargo/load on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database);
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    test('stores a pending cargo and tracking reports it', async () => {
      const { key, projectId } = await createProjectWithKey(db.database);
      const res = await app.request('POST', '/cargo/load', { key, body: mockBody('hi', { metadata: { a: 1 } }) });
      assert.equal(res.status, 200);
      assert.match(res.body.cargo_id, /^crg_[0-9a-z]{26}$/);
      assert.deepEqual(res.body, {
        cargo_id: res.body.cargo_id,
        status: 'success',
        message: 'Cargo loaded successfully',
      });

      const row = await storedCargo(db.database, res.body.cargo_id);
      assert.equal(row.project_id, projectId);
      assert.equal(row.status, 'pending');
      assert.equal(row.metadata, '{"a":1}');
      assert.equal(row.result_ttl_seconds, 2_592_000);
      assert.deepEqual(JSON.parse(row.request), {
        requests: [{ modelInput: { max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] } }],
      });

      const tracking = await app.request('GET', `/cargo/${res.body.cargo_id}/tracking`, { key });
      assert.equal(tracking.status, 200);
      assert.equal(tracking.body.status, 'pending');
      assert.equal(tracking.body.status_description, 'Waiting to be assigned to a batch');
    });
  });
}
