/** /openapi.json documents every provider-compatible route under its own tags, with both key schemes, examples and error shapes. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const [backend] = await backends();
if (!backend) throw new Error('no backend');

describe('the OpenAPI document of the batch endpoints', () => {
  const h = harness(backend);

  test('every route, its tag, the key as X-API-Key or Bearer, an example and the API’s error shape', async () => {
    const doc = (await h.app.request('GET', '/openapi.json')).body;
    assert.deepEqual(doc.components.securitySchemes.bearerApiKey.scheme, 'bearer');
    const routes: [string, string[], string][] = [
      ['/v1/messages/batches', ['post', 'get'], 'anthropic: message batches'],
      ['/v1/messages/batches/{message_batch_id}', ['get', 'delete'], 'anthropic: message batches'],
      ['/v1/messages/batches/{message_batch_id}/cancel', ['post'], 'anthropic: message batches'],
      ['/v1/messages/batches/{message_batch_id}/results', ['get'], 'anthropic: message batches'],
      ['/v1/files', ['post', 'get'], 'openai: files'],
      ['/v1/files/{file_id}', ['get', 'delete'], 'openai: files'],
      ['/v1/files/{file_id}/content', ['get'], 'openai: files'],
      ['/v1/batches', ['post', 'get'], 'openai: batches'],
      ['/v1/batches/{batch_id}', ['get'], 'openai: batches'],
      ['/v1/batches/{batch_id}/cancel', ['post'], 'openai: batches'],
    ];
    for (const [path, methods, tag] of routes) {
      for (const method of methods) {
        const op = doc.paths[path]?.[method];
        assert.ok(op, `${method} ${path}`);
        assert.deepEqual(op.tags, [tag], `${method} ${path}`);
        assert.deepEqual(op.security, [{ apiKey: [] }, { bearerApiKey: [] }], `${method} ${path}`);
        const ok = op.responses['200'].content;
        const media = Object.values(ok)[0] as { example?: unknown; schema: { examples?: unknown[] } };
        assert.ok(media.example ?? media.schema.examples?.[0], `${method} ${path} has an example`);
        const unauthorized = op.responses['401'].content['application/json'].example;
        if (tag.startsWith('anthropic')) assert.equal(unauthorized.type, 'error', `${method} ${path}`);
        else assert.ok('param' in unauthorized.error, `${method} ${path}`);
      }
    }
    assert.ok(doc.tags.some((t: { name: string }) => t.name === 'openai: batches'));
    assert.ok(doc.paths['/v1/messages/batches'].post.requestBody.content['application/json'].example);
    assert.ok(doc.paths['/v1/files'].post.requestBody.content['multipart/form-data']);
  });
});
