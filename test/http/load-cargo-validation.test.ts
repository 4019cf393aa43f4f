/** POST /cargo/load validation on every backend: each field's bounds, records, callbacks, every problem in one 400. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProjectWithKey, mockBody, startTestApp, storedCargo, type TestApp } from '../helpers/app.js';
import { assertErrorList, assertInvalidField } from '../helpers/assertions.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { jsonValueOfLength, metadataOfBytes, metadataWithEntries } from '../helpers/metadata.js';

const messages = [{ role: 'user', content: 'hi' }];
const withParams = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  params: { model: 'svc-mock', messages, ...params },
  ...extra,
});
const records = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    recordId: `r${i}`,
    modelInput: { messages: [{ role: 'user', content: 'q' }] },
  }));

for (const backend of await backends()) {
  describe(`POST /cargo/load validation on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let strictApp: TestApp;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database);
      strictApp = await startTestApp(db.database, { config: { allowPrivateCallbacks: false } });
    });
    after(async () => {
      await app.close();
      await strictApp.close();
      await db.drop();
    });

    const load = (key: string, body: unknown, target: TestApp = app) =>
      target.request('POST', '/cargo/load', { key, body });
    const loadRaw = (key: string, rawBody: string) =>
      app.request('POST', '/cargo/load', { key, rawBody, headers: { 'content-type': 'application/json' } });
    const stored = (cargoId: string) => storedCargo(db.database, cargoId);
    const storedRequests = async (cargoId: string) => JSON.parse((await stored(cargoId)).request).requests;
    const cargoCount = async (projectId: string) =>
      (await db.database.write.selectFrom('cargo').select('id').where('project_id', '=', projectId).execute()).length;

    async function accepted(key: string, body: unknown, target: TestApp = app) {
      const res = await load(key, body, target);
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.cargo_id, /^crg_[0-9a-z]{26}$/);
      return stored(res.body.cargo_id);
    }

    test('metadata: 50 entries accepted, 51 rejected', async () => {
      const { key } = await createProjectWithKey(db.database);
      await accepted(key, mockBody('hi', { metadata: metadataWithEntries(50) }));
      assertInvalidField(await load(key, mockBody('hi', { metadata: metadataWithEntries(51) })), '/metadata');
    });

    test('metadata: 128-character key accepted, 129 rejected naming the key', async () => {
      const { key } = await createProjectWithKey(db.database);
      await accepted(key, mockBody('hi', { metadata: { ['k'.repeat(128)]: 'v' } }));
      const long = 'k'.repeat(129);
      assertInvalidField(await load(key, mockBody('hi', { metadata: { [long]: 'v' } })), `/metadata/${long}`);
    });

    test('metadata: 2048-character values accepted, 2049 rejected (strings and other JSON values)', async () => {
      const { key } = await createProjectWithKey(db.database);
      await accepted(key, mockBody('hi', { metadata: { s: 'x'.repeat(2048) } }));
      assertInvalidField(await load(key, mockBody('hi', { metadata: { s: 'x'.repeat(2049) } })), '/metadata/s');
      await accepted(key, mockBody('hi', { metadata: { j: jsonValueOfLength(2048) } }));
      assertInvalidField(await load(key, mockBody('hi', { metadata: { j: jsonValueOfLength(2049) } })), '/metadata/j');
      assertInvalidField(
        await load(key, mockBody('hi', { metadata: { o: { a: 'z'.repeat(2041) } } })), // 2049 as JSON
        '/metadata/o',
      );
    });

    test('metadata: 4096 bytes of UTF-8 accepted, 4097 rejected', async () => {
      const { key } = await createProjectWithKey(db.database);
      const row = await accepted(key, mockBody('hi', { metadata: metadataOfBytes(4096) }));
      assert.equal(Buffer.byteLength(row.metadata ?? '', 'utf8'), 4096);
      assertInvalidField(await load(key, mockBody('hi', { metadata: metadataOfBytes(4097) })), '/metadata');
    });

    test('metadata: must be an object or null; null is stored as null', async () => {
      const { key } = await createProjectWithKey(db.database);
      const row = await accepted(key, mockBody('hi', { metadata: null }));
      assert.equal(row.metadata, null);
      const omitted = await accepted(key, mockBody('hi'));
      assert.equal(omitted.metadata, null);
      const empty = await accepted(key, mockBody('hi', { metadata: {} }));
      assert.equal(empty.metadata, '{}');
      for (const metadata of [[1, 2], 'text', 5, true]) {
        assertInvalidField(await load(key, mockBody('hi', { metadata })), '/metadata');
      }
    });

    test('metadata is stored exactly as sent: key order, integer-like keys, unicode, numbers, escapes', async () => {
      const { key } = await createProjectWithKey(db.database);
      const metadata =
        '{"zeta":1,"alpha":{"y":[1,2,{"b":null,"a":false}],"x":"é"},"10":"ten","2":"two","日本":"語 😀","id":12345678901234567890,"f":1.50,"esc":"\\u00e9\\"\\n"}';
      const res = await loadRaw(
        key,
        `{"params":{"model":"svc-mock","messages":[{"role":"user","content":"hi"}]},"metadata":${metadata}}`,
      );
      assert.equal(res.status, 200, res.text);
      assert.equal((await stored(res.body.cargo_id)).metadata, metadata);

      // Whitespace between tokens is not part of the value; what is inside strings is.
      const spaced = await loadRaw(
        key,
        '{ "metadata" : {\n  "b" : [ 1 , 2 ],\n  "a" : " two  spaces "\n},\n"params":{"model":"svc-mock","messages":[{"role":"user","content":"hi"}]}}',
      );
      assert.equal(spaced.status, 200, spaced.text);
      assert.equal((await stored(spaced.body.cargo_id)).metadata, '{"b":[1,2],"a":" two  spaces "}');
    });

    test('result_ttl_seconds: 3599 and 2592001 rejected, 3600 and 2592000 accepted, default 2592000', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, mockBody('hi', { result_ttl_seconds: 3599 })), '/result_ttl_seconds');
      assertInvalidField(await load(key, mockBody('hi', { result_ttl_seconds: 2_592_001 })), '/result_ttl_seconds');
      assert.equal((await accepted(key, mockBody('hi', { result_ttl_seconds: 3600 }))).result_ttl_seconds, 3600);
      assert.equal(
        (await accepted(key, mockBody('hi', { result_ttl_seconds: 2_592_000 }))).result_ttl_seconds,
        2_592_000,
      );
      assert.equal((await accepted(key, mockBody('hi'))).result_ttl_seconds, 2_592_000);
      assertInvalidField(await load(key, mockBody('hi', { result_ttl_seconds: 3600.5 })), '/result_ttl_seconds');
      assertInvalidField(await load(key, mockBody('hi', { result_ttl_seconds: '3600' })), '/result_ttl_seconds');
      assertInvalidField(await load(key, mockBody('hi', { result_ttl_seconds: null })), '/result_ttl_seconds');
    });

    for (const field of ['temperature', 'top_p']) {
      test(`${field}: -0.01 and 1.01 rejected, 0 and 1 accepted and stored`, async () => {
        const { key } = await createProjectWithKey(db.database);
        assertInvalidField(await load(key, withParams({ [field]: -0.01 })), `/params/${field}`);
        assertInvalidField(await load(key, withParams({ [field]: 1.01 })), `/params/${field}`);
        assertInvalidField(await load(key, withParams({ [field]: '0.5' })), `/params/${field}`);
        for (const value of [0, 1, 0.5]) {
          const row = await accepted(key, withParams({ [field]: value }));
          assert.equal(JSON.parse(row.request).requests[0].modelInput[field], value);
        }
      });
    }

    test('top_k: -1 rejected, 0 accepted, non-integer rejected', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, withParams({ top_k: -1 })), '/params/top_k');
      assertInvalidField(await load(key, withParams({ top_k: 1.5 })), '/params/top_k');
      const row = await accepted(key, withParams({ top_k: 0 }));
      assert.equal(JSON.parse(row.request).requests[0].modelInput.top_k, 0);
    });

    test('max_tokens: 0 and non-integers rejected, 1 accepted, default 1024', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, withParams({ max_tokens: 0 })), '/params/max_tokens');
      assertInvalidField(await load(key, withParams({ max_tokens: 1.5 })), '/params/max_tokens');
      assertInvalidField(await load(key, withParams({ max_tokens: '10' })), '/params/max_tokens');
      assert.equal(
        (await storedRequests((await load(key, withParams({ max_tokens: 1 }))).body.cargo_id))[0].modelInput.max_tokens,
        1,
      );
      const row = await accepted(key, withParams({}));
      assert.deepEqual(JSON.parse(row.request), {
        requests: [{ modelInput: { max_tokens: 1024, messages } }],
      });
      assert.equal(row.request_count, 1);
      assert.equal(row.request_bytes, Buffer.byteLength(row.request));
    });

    test('stop_sequences: an empty string is rejected, non-empty strings kept', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, withParams({ stop_sequences: ['END', ''] })), '/params/stop_sequences/1');
      assertInvalidField(await load(key, withParams({ stop_sequences: 'END' })), '/params/stop_sequences');
      assertInvalidField(await load(key, withParams({ stop_sequences: [1] })), '/params/stop_sequences/0');
      const row = await accepted(key, withParams({ stop_sequences: ['END', '\n\n'], system: 'Be brief.' }));
      const input = JSON.parse(row.request).requests[0].modelInput;
      assert.deepEqual(input.stop_sequences, ['END', '\n\n']);
      assert.equal(input.system, 'Be brief.');
      assertInvalidField(await load(key, withParams({ system: 5 })), '/params/system');
    });

    test('messages: empty list, bad role, empty content, empty block list, wrong block type all rejected', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, withParams({ messages: [] })), '/params/messages');
      assertInvalidField(await load(key, withParams({ messages: 'hi' })), '/params/messages');
      assertInvalidField(
        await load(key, withParams({ messages: [{ role: 'system', content: 'x' }] })),
        '/params/messages/0/role',
      );
      assertInvalidField(
        await load(key, withParams({ messages: [{ role: 'user', content: '' }] })),
        '/params/messages/0/content',
      );
      assertInvalidField(
        await load(key, withParams({ messages: [{ role: 'user', content: [] }] })),
        '/params/messages/0/content',
      );
      assertInvalidField(
        await load(key, withParams({ messages: [{ role: 'user', content: [{ type: 'video', text: 'x' }] }] })),
        '/params/messages/0/content/0/type',
      );
      assertInvalidField(
        await load(key, withParams({ messages: [{ role: 'user', content: [{ type: 'text' }] }] })),
        '/params/messages/0/content/0/text',
      );
      assertInvalidField(await load(key, withParams({ messages: [{ role: 'user' }] })), '/params/messages/0/content');
      assertInvalidField(
        await load(key, withParams({ messages: [{ role: 'user', content: 'x', name: 'n' }] })),
        '/params/messages/0/name',
      );
      assertInvalidField(
        await load(key, withParams({ messages: [messages[0], { role: 'user', content: '' }] })),
        '/params/messages/1/content',
      );
    });

    test('content: the 400 names the rule broken, not only that it is neither a string nor blocks', async () => {
      const { key } = await createProjectWithKey(db.database);
      const at = '/params/messages/0/content';
      const cases: [unknown, { path: string; message: string }][] = [
        ['', { path: at, message: 'must not be empty' }],
        [[], { path: at, message: 'must not be empty' }],
        [
          Array.from({ length: 1001 }, () => ({ type: 'text', text: 'x' })),
          { path: at, message: 'must NOT have more than 1000 items' },
        ],
        [[{ type: 'video', text: 'x' }], { path: `${at}/0/type`, message: 'is not one of the accepted types' }],
        [[{ type: 'image', source: { type: 'url' } }], { path: `${at}/0/source/url`, message: 'is required' }],
        [[{ type: 'text' }], { path: `${at}/0/text`, message: 'is required' }],
        [[{ type: 'text', text: '' }], { path: `${at}/0/text`, message: 'must not be empty' }],
        [5, { path: at, message: 'must be string or array' }],
      ];
      for (const [content, error] of cases) {
        const res = await load(key, withParams({ messages: [{ role: 'user', content }] }));
        assert.equal(res.status, 400, res.text);
        assert.deepEqual(res.body.errors, [error], JSON.stringify(content).slice(0, 100));
        assert.equal(res.body.detail, `Invalid request body: ${error.path} ${error.message}.`);
      }
    });

    test('a body that is not JSON, or holds a refused key, is a 400 with errors too', async () => {
      const { key } = await createProjectWithKey(db.database);
      const broken = await loadRaw(key, '{"params":');
      assertErrorList(broken);
      assert.equal(broken.body.errors.length, 1);
      assert.equal(broken.body.errors[0].path, '');
      assert.match(broken.body.errors[0].message, /^is not valid JSON: ./);
      assert.match(broken.body.detail, /^Request body is not valid JSON: ./);

      const polluted = await loadRaw(
        key,
        '{"params":{"model":"svc-mock","messages":[{"role":"user","content":"hi"}]},"metadata":{"__proto__":{}}}',
      );
      assertErrorList(polluted);
      assert.deepEqual(polluted.body.errors, [
        { path: '/metadata/__proto__', message: 'is refused, to protect against prototype pollution' },
      ]);
    });

    test('messages: text blocks and both roles are accepted and stored as given', async () => {
      const { key } = await createProjectWithKey(db.database);
      const conversation = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'one' },
            { type: 'text', text: 'two' },
          ],
        },
        { role: 'assistant', content: 'three' },
        { role: 'user', content: 'four' },
      ];
      const row = await accepted(key, withParams({ messages: conversation }));
      assert.deepEqual(JSON.parse(row.request).requests[0].modelInput.messages, conversation);
    });

    test('unknown top-level and params fields are rejected, each named', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, mockBody('hi', { priority: 'high' })), '/priority');
      assertInvalidField(await load(key, withParams({ stream: true })), '/params/stream');
      const both = await load(key, withParams({ stream: true }, { priority: 'high' }));
      assertInvalidField(both, '/params/stream');
      assertInvalidField(both, '/priority');
    });

    test('missing params, params not an object, missing params.model', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, { metadata: { a: 1 } }), '/params');
      assertInvalidField(await load(key, { params: 'svc-mock' }), '/params');
      assertInvalidField(await load(key, { params: { messages } }), '/params/model');
      assertInvalidField(await load(key, { params: { model: '', messages } }), '/params/model');
      assertInvalidField(await load(key, { params: { model: 7, messages } }), '/params/model');
    });

    test('an unknown model is rejected naming it as unknown and pointing at GET /models', async () => {
      const { key } = await createProjectWithKey(db.database);
      const res = await load(key, { params: { model: 'gpt-unknown-9', messages } });
      assertInvalidField(res, '/params/model');
      const error = res.body.errors.find((e: { path: string }) => e.path === '/params/model');
      assert.match(error.message, /'gpt-unknown-9' is not a known model/);
      assert.match(error.message, /GET \/models/);
      assert.match(res.body.detail, /gpt-unknown-9/);
    });

    test('records: one cargo for the list; record settings override shared ones; max_tokens defaults to 1024', async () => {
      const { key } = await createProjectWithKey(db.database);
      const row = await accepted(key, {
        params: { model: 'svc-mock', temperature: 0.2, system: 'shared' },
        records: [
          { recordId: 'q1', modelInput: { max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] } },
          {
            recordId: 'q2',
            modelInput: { temperature: 0.9, system: 'own', messages: [{ role: 'user', content: 'Bye' }] },
          },
        ],
      });
      assert.equal(row.request_count, 2);
      assert.equal(row.model, 'svc-mock');
      assert.deepEqual(JSON.parse(row.request), {
        requests: [
          {
            recordId: 'q1',
            modelInput: {
              temperature: 0.2,
              system: 'shared',
              max_tokens: 64,
              messages: [{ role: 'user', content: 'Hello' }],
            },
          },
          {
            recordId: 'q2',
            modelInput: {
              temperature: 0.9,
              system: 'own',
              max_tokens: 1024,
              messages: [{ role: 'user', content: 'Bye' }],
            },
          },
        ],
      });
      const shared = await accepted(key, { params: { model: 'svc-mock', max_tokens: 10 }, records: records(2) });
      assert.deepEqual(
        JSON.parse(shared.request).requests.map((r: { modelInput: { max_tokens: number } }) => r.modelInput.max_tokens),
        [10, 10],
      );
    });

    test('records: duplicate recordId, records with params.messages, and neither are rejected', async () => {
      const { key } = await createProjectWithKey(db.database);
      const dup = records(3);
      dup[2] = { ...dup[2], recordId: 'r0' } as (typeof dup)[number];
      assertInvalidField(await load(key, { params: { model: 'svc-mock' }, records: dup }), '/records/2/recordId');
      assertInvalidField(await load(key, { params: { model: 'svc-mock', messages }, records: records(1) }), '/records');
      assertInvalidField(await load(key, { params: { model: 'svc-mock' } }), '/params/messages');
      assertInvalidField(await load(key, { params: { model: 'svc-mock' }, records: [] }), '/records');
      assertInvalidField(
        await load(key, { params: { model: 'svc-mock' }, records: [{ recordId: 'a', modelInput: {} }] }),
        '/records/0/modelInput/messages',
      );
      assertInvalidField(
        await load(key, { params: { model: 'svc-mock' }, records: [{ modelInput: { messages } }] }),
        '/records/0/recordId',
      );
      assertInvalidField(
        await load(key, {
          params: { model: 'svc-mock' },
          records: [{ recordId: 'a', modelInput: { messages, model: 'svc-mock' } }],
        }),
        '/records/0/modelInput/model',
      );
    });

    test('records: 10,000 accepted, 10,001 rejected', async () => {
      const { key } = await createProjectWithKey(db.database);
      const row = await accepted(key, { params: { model: 'svc-mock' }, records: records(10_000) });
      assert.equal(row.request_count, 10_000);
      assertInvalidField(await load(key, { params: { model: 'svc-mock' }, records: records(10_001) }), '/records');
    });

    test('callback_url: must be an absolute http(s) URL; http is accepted in development', async () => {
      const { key } = await createProjectWithKey(db.database);
      assertInvalidField(await load(key, mockBody('hi', { callback_url: 'not a url' })), '/callback_url');
      assertInvalidField(await load(key, mockBody('hi', { callback_url: '/relative/hook' })), '/callback_url');
      assertInvalidField(await load(key, mockBody('hi', { callback_url: 'ftp://example.com/hook' })), '/callback_url');
      assertInvalidField(await load(key, mockBody('hi', { callback_url: 42 })), '/callback_url');
      // The URL parser would escape these, but the text is stored as sent (PostgreSQL refuses NUL).
      for (const bad of ['https://example.com/\u0000hook', 'https://example.com/a b', 'https://example.com/\nx']) {
        assertInvalidField(await load(key, mockBody('hi', { callback_url: bad })), '/callback_url');
      }
      const http = await accepted(key, mockBody('hi', { callback_url: 'http://127.0.0.1:9/hook' }));
      assert.equal(http.callback_url, 'http://127.0.0.1:9/hook');
      const https = await accepted(key, mockBody('hi', { callback_url: 'https://example.com/hooks/barge?x=1' }));
      assert.equal(https.callback_url, 'https://example.com/hooks/barge?x=1');
      assert.equal((await accepted(key, mockBody('hi', { callback_url: null }))).callback_url, null);
      assert.equal((await accepted(key, mockBody('hi'))).callback_url, null);
    });

    test('callback_url: http is rejected when private callbacks are not allowed; https still accepted', async () => {
      const { key } = await createProjectWithKey(db.database);
      const res = await load(key, mockBody('hi', { callback_url: 'http://example.com/hook' }), strictApp);
      assertInvalidField(res, '/callback_url');
      assert.match(res.body.errors[0].message, /https/);
      await accepted(key, mockBody('hi', { callback_url: 'https://example.com/hook' }), strictApp);
    });

    test('callback object: missing or wrong fields are 400; a well-shaped one is 422 connection_not_found', async () => {
      const { key, projectId } = await createProjectWithKey(db.database);
      const missing = await load(key, mockBody('hi', { callback: { type: 'object_store' } }));
      assertInvalidField(missing, '/callback/connection_id');
      assertInvalidField(missing, '/callback/bucket_arn');
      const good = { type: 'object_store', connection_id: 'conn_x', bucket_arn: 'arn:aws:s3:::bucket' };
      assertInvalidField(await load(key, mockBody('hi', { callback: { ...good, type: 'webhook' } })), '/callback/type');
      assertInvalidField(await load(key, mockBody('hi', { callback: { ...good, region: 'x' } })), '/callback/region');
      assertInvalidField(await load(key, mockBody('hi', { callback: 'conn_x' })), '/callback');

      // Body problems come before delivery-target checks.
      assertInvalidField(await load(key, withParams({ temperature: 2 }, { callback: good })), '/params/temperature');

      const res = await load(key, mockBody('hi', { callback: { ...good, key_prefix: 'convoy/' } }));
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(Object.keys(res.body), ['detail']);
      assert.deepEqual(Object.keys(res.body.detail).sort(), ['error', 'message']);
      assert.equal(res.body.detail.error, 'connection_not_found');
      assert.equal(typeof res.body.detail.message, 'string');
      assert.match(res.body.detail.message, /conn_x/);
      assert.equal(await cargoCount(projectId), 0, 'nothing is stored for a rejected request');
    });

    test('every field problem is reported in one 400, and nothing is stored', async () => {
      const { key, projectId } = await createProjectWithKey(db.database);
      const res = await load(key, {
        params: { model: 'nope', max_tokens: 0, temperature: 3, messages: [{ role: 'robot', content: '' }] },
        metadata: metadataWithEntries(51),
        result_ttl_seconds: 1,
        callback_url: 'ftp://x',
      });
      assertErrorList(res);
      for (const path of [
        '/params/max_tokens',
        '/params/temperature',
        '/params/messages/0/role',
        '/params/messages/0/content',
        '/result_ttl_seconds',
      ]) {
        assertInvalidField(res, path);
      }
      assert.equal(await cargoCount(projectId), 0);
    });
  });
}
