/** POST /cargo/load on every backend: a pending cargo stored as sent, and tracking reports it. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createProjectWithKey, mockBody, storedCargo } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

for (const backend of await backends()) {
  describe(`POST /cargo/load on ${backend.name}`, () => {
    const h = harness(backend);

    test('stores a pending cargo and tracking reports it', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const res = await h.app.request('POST', '/cargo/load', { key, body: mockBody('hi', { metadata: { a: 1 } }) });
      assert.equal(res.status, 200);
      assert.match(res.body.cargo_id, /^crg_[0-9a-z]{26}$/);
      assert.deepEqual(res.body, {
        cargo_id: res.body.cargo_id,
        status: 'success',
        message: 'Cargo loaded successfully',
      });

      const row = await storedCargo(h.db.database, res.body.cargo_id);
      assert.equal(row.project_id, projectId);
      assert.equal(row.status, 'pending');
      assert.equal(row.metadata, '{"a":1}');
      assert.equal(row.result_ttl_seconds, 2_592_000);
      assert.deepEqual(JSON.parse(row.request), {
        requests: [{ modelInput: { max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] } }],
      });

      const tracking = await h.app.request('GET', `/cargo/${res.body.cargo_id}/tracking`, { key });
      assert.equal(tracking.status, 200);
      assert.equal(tracking.body.status, 'pending');
      assert.equal(tracking.body.status_description, 'Waiting to be assigned to a batch');
    });
  });
}
