/**
 * Every tenant is a stranger: one project never sees, reads, cancels or deletes another's files
 * and batches through the provider-compatible endpoints (404 each, as for an id that does not
 * exist), its lists never show them, and it cannot make a batch from another's file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProjectWithKey, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

const line = (customId: string) =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'svc-mock', messages: [{ role: 'user', content: 'hi' }] },
  });

for (const backend of await backends()) {
  describe(`tenant isolation of the batch endpoints on ${backend.name}`, () => {
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

    const call = (key: string, method: string, path: string, body?: unknown) =>
      app.request(method, path, { headers: { authorization: `Bearer ${key}` }, ...(body ? { body } : {}) });

    test("another project's files and batches are 404 everywhere and absent from its lists", async () => {
      const owner = (await createProjectWithKey(db.database)).key;
      const stranger = (await createProjectWithKey(db.database)).key;

      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', new Blob([`${line('a')}\n${line('b')}\n`]), 'in.jsonl');
      const upload = await fetch(`${app.url}/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner}` },
        body: form,
      });
      assert.equal(upload.status, 200);
      const file = (await upload.json()) as { id: string };
      const batch = await call(owner, 'POST', '/v1/batches', {
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      assert.equal(batch.status, 200, batch.text);
      const messageBatch = await call(owner, 'POST', '/v1/messages/batches', {
        requests: [
          { custom_id: 'x', params: { model: 'svc-mock', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } },
        ],
      });
      assert.equal(messageBatch.status, 200, messageBatch.text);

      const hidden: [string, string][] = [
        ['GET', `/v1/files/${file.id}`],
        ['GET', `/v1/files/${file.id}/content`],
        ['DELETE', `/v1/files/${file.id}`],
        ['GET', `/v1/batches/${batch.body.id}`],
        ['POST', `/v1/batches/${batch.body.id}/cancel`],
        ['GET', `/v1/messages/batches/${messageBatch.body.id}`],
        ['GET', `/v1/messages/batches/${messageBatch.body.id}/results`],
        ['POST', `/v1/messages/batches/${messageBatch.body.id}/cancel`],
        ['DELETE', `/v1/messages/batches/${messageBatch.body.id}`],
      ];
      for (const [method, path] of hidden) {
        const res = await call(stranger, method, path);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      }
      const fromTheirFile = await call(stranger, 'POST', '/v1/batches', {
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      assert.equal(fromTheirFile.status, 400, 'a batch cannot be made from another project’s file');
      for (const path of ['/v1/files', '/v1/batches', '/v1/messages/batches']) {
        assert.deepEqual((await call(stranger, 'GET', path)).body.data, [], `${path} lists nothing of the owner`);
      }
      const cargo = await app.request('GET', '/cargo', { key: stranger });
      assert.deepEqual(cargo.body.data, [], 'nor does GET /cargo');

      // The owner still has all of it, untouched by the stranger's tries.
      assert.equal((await call(owner, 'GET', `/v1/files/${file.id}`)).status, 200);
      assert.equal((await call(owner, 'GET', `/v1/batches/${batch.body.id}`)).body.status, 'in_progress');
      const mine = await call(owner, 'GET', `/v1/messages/batches/${messageBatch.body.id}`);
      assert.equal(mine.body.processing_status, 'in_progress');
      assert.equal((await app.request('GET', '/cargo', { key: owner })).body.data.length, 3);
    });
  });
}
