/**
 * Hostile bodies on the batch endpoints, with a cargo body limit of 64 KiB and batches of at most
 * 3 requests (BARGE_COMPAT_*), so that bodies of a few MB reach every bound: one JSON token larger than a request anywhere in a Message Batches
 * create, a Batch input file of one huge line, error messages that quote what the tenant sent.
 * Each is refused (4xx, or a failed batch naming the line) with an answer of bounded size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { systemClock } from '../../src/domain/clock.js';
import { PROVIDER_LIMITS } from '../../src/domain/compat-limits.js';
import { setStorageBudget } from '../../src/operations/set-storage-budget.js';
import { createProjectWithKey, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

const LIMIT = 64 * 1024;

const line = (customId: string, body: Record<string, unknown>) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body });
const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'svc-mock',
  messages: [{ role: 'user', content }],
  ...extra,
});

for (const backend of await backends()) {
  describe(`hostile batch bodies on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let key: string;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, {
        config: { bodyLimitBytes: LIMIT, compatLimits: { ...PROVIDER_LIMITS, batchRequests: 3, fileLines: 3 } },
      });
      key = (await createProjectWithKey(db.database)).key;
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    const create = (rawBody: string) =>
      app.request('POST', '/v1/messages/batches', { key, rawBody, headers: { 'content-type': 'application/json' } });

    test('one JSON token larger than a request, before, inside or after the requests: 413, the token never echoed', async () => {
      const big = 'k'.repeat(2 * 1024 * 1024);
      const request = (content: string) =>
        JSON.stringify({
          custom_id: 'a',
          params: { model: 'svc-mock', max_tokens: 5, messages: [{ role: 'user', content }] },
        });
      const bodies = [
        `{"${big}": 1}`,
        `{"requests": [${request('hi')}], "${big}": 1}`,
        `{"requests": [${request('hi')}, ${'1'.repeat(2 * 1024 * 1024)}]}`,
        `{"requests": [${request(big)}]}`,
      ];
      for (const body of bodies) {
        const res = await create(body);
        assert.equal(res.status, 413, res.text.slice(0, 200));
        assert.equal(res.body.type, 'error');
        assert.match(res.body.error.message, new RegExp(`limit of ${LIMIT} bytes`));
        assert.ok(res.text.length < 1000, `the answer is ${res.text.length} bytes`);
      }
    });

    test('an upload that declares no length is held to the storage budget at its real size', async () => {
      const { slug, key: small } = await createProjectWithKey(db.database);
      const budget = await setStorageBudget(
        { database: db.database, clock: systemClock },
        { slug, dailyBytes: 100_000 },
      );
      assert.ok(budget.ok);
      const file = `${line('a', chat('z'.repeat(50_000)))}\n${line('b', chat('z'.repeat(50_000)))}\n`;
      const parts = [
        '--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n',
        '--b\r\nContent-Disposition: form-data; name="file"; filename="in.jsonl"\r\n\r\n',
        file,
        '\r\n--b--\r\n',
      ];
      // Streamed: no Content-Length, so nothing is known of its size before it is read.
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const part = parts.shift();
          if (part === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(part));
        },
      });
      const res = await fetch(`${app.url}/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${small}`, 'content-type': 'multipart/form-data; boundary=b' },
        body,
        duplex: 'half',
      } as RequestInit);
      const answer = (await res.json()) as { error: { message: string } };
      assert.equal(res.status, 429, JSON.stringify(answer));
      const listed = await app.request('GET', '/v1/files', { headers: { authorization: `Bearer ${small}` } });
      assert.deepEqual(listed.body.data, [], 'nothing of it is kept');
    });

    test('an input file that reads back shorter than it was stored is refused, and makes no batch', async () => {
      const sdk = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 });
      const file = await sdk.files.create({
        file: await toFile(Buffer.from(`${line('a', chat('hi'))}\n`), 'in.jsonl'),
        purpose: 'batch',
      });
      // What a store that lost a chunk would hold: the file's row says more bytes than its chunks have.
      await db.database.write.deleteFrom('compat_file_chunks').where('file_id', '=', file.id).execute();
      const before = await sdk.batches.list();
      await assert.rejects(
        sdk.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && /incomplete: 0 of its \d+ bytes/.test(err.message),
      );
      assert.equal((await sdk.batches.list()).data.length, before.data.length);
    });

    test('the lowered limits hold: a fourth request, a fourth line', async () => {
      const request = (i: number) => ({
        custom_id: `r${i}`,
        params: { model: 'svc-mock', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      });
      const res = await create(JSON.stringify({ requests: [0, 1, 2, 3].map(request) }));
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, /at most 3 items/);
      const sdk = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 });
      const file = await sdk.files.create({
        file: await toFile(Buffer.from([0, 1, 2, 3].map((i) => line(`l${i}`, chat('hi'))).join('\n')), 'in.jsonl'),
        purpose: 'batch',
      });
      const batch = await sdk.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      assert.equal(batch.status, 'failed');
      assert.deepEqual(
        batch.errors?.data?.map((e) => e.code),
        ['too_many_tasks'],
      );
    });

    test('a refusal that quotes the tenant (an unknown key of 20,000 characters) is cut', async () => {
      const res = await create(`{"${'q'.repeat(20_000)}": 1}`);
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, /^q+…$/);
      assert.ok(res.body.error.message.length <= 300, `a message of ${res.body.error.message.length} characters`);
    });

    test('a Batch input file of one line over the cap: failed, naming line 2; messages quoting the tenant are cut', async () => {
      const sdk = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 });
      const longKey = `x${'y'.repeat(20_000)}`;
      const lines = [
        line('ok', chat('hello')),
        line('huge', chat('z'.repeat(3 * LIMIT))),
        line('odd', chat('hello', { [longKey]: 1 })),
      ];
      const file = await sdk.files.create({
        file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'in.jsonl'),
        purpose: 'batch',
      });
      const started = Date.now();
      const batch = await sdk.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      assert.ok(Date.now() - started < 5000, `it took ${Date.now() - started} ms`);
      assert.equal(batch.status, 'failed');
      const errors = batch.errors?.data ?? [];
      assert.deepEqual(
        errors.map((e) => [e.code, e.line]),
        [
          ['line_too_large', 2],
          ['unsupported_parameter', 3],
        ],
      );
      assert.match(errors[0]?.message ?? '', new RegExp(`at most ${LIMIT} bytes`));
      for (const e of errors) {
        assert.ok((e.message ?? '').length <= 300, `a message of ${e.message?.length} characters`);
        assert.ok((e.param ?? '').length <= 300, `a param of ${e.param?.length} characters`);
      }
    });
  });
}
