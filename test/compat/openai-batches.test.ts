/**
 * barge's Files and Batch endpoints driven by the official `openai` SDK, unchanged but for its
 * base URL and key, on every backend: upload, create, retrieve, download the output and error
 * files, across svc-mock, an Anthropic model (the Anthropic emulator) and an OpenAI model (the
 * OpenAI emulator) in one file; a bad line fails the batch with 1-based line numbers and creates
 * no cargo; cancel; the files' list and delete; errors in OpenAI's shape and status codes.
 * The workers run step by step on a ManualClock the emulators share.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { Service } from '../../src/service.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { compatSuite } from '../helpers/compat.js';

const line = (customId: string, body: Record<string, unknown>) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body });
const jsonl = (lines: string[]) => toFile(Buffer.from(`${lines.join('\n')}\n`), 'requests.jsonl');
const chat = (model: string, content: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content }],
  ...extra,
});

for (const backend of await backends()) {
  describe(`Files and Batch through the openai SDK on ${backend.name}`, () => {
    const { clock, h, anthropic } = compatSuite(backend);

    const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    const untilDone = async (worker: Service, sdk: OpenAI, id: string) => {
      for (let i = 0; i < 30; i++) {
        const batch = await sdk.batches.retrieve(id);
        if (['completed', 'cancelled', 'failed'].includes(batch.status)) return batch;
        clock.advance(60_000);
        await worker.runUntilIdle();
      }
      assert.fail(`batch ${id} did not end`);
    };
    const linesOf = async (sdk: OpenAI, fileId: string | null | undefined) => {
      assert.ok(fileId, 'the file exists');
      const text = await (await sdk.files.content(fileId)).text();
      assert.ok(text.endsWith('\n'));
      return text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l));
    };

    test('upload, create, retrieve, download the output and error files across svc-mock, Anthropic and OpenAI models', async () => {
      const { worker } = await h.worker({ latencyMs: 0, settings: { batchMaxWaitMs: 0 } });
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = client(key);
      const input = [
        line('gpt', chat('gpt-4o-mini', 'Name a canal.', { max_completion_tokens: 3 })),
        line('mock', {
          model: 'svc-mock',
          messages: [
            { role: 'developer', content: 'Answer briefly.' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Hello' },
                { type: 'text', text: ' river' },
              ],
            },
          ],
          max_tokens: 40,
          stop: 'END',
          temperature: 0.5,
          n: 1,
        }),
        line('claude', chat('claude-sonnet-4-5', 'Name a barge.', { max_tokens: 2 })),
        line('fails', chat('svc-mock', 'please svc-mock:fail')),
      ];
      const file = await sdk.files.create({ file: await jsonl(input), purpose: 'batch' });
      assert.match(file.id, /^file-[0-9a-z]{26}$/);
      assert.equal(file.object, 'file');
      assert.equal(file.purpose, 'batch');
      assert.equal(file.filename, 'requests.jsonl');
      assert.equal(file.bytes, Buffer.byteLength(`${input.join('\n')}\n`));
      assert.deepEqual(await sdk.files.retrieve(file.id), file);
      assert.equal(await (await sdk.files.content(file.id)).text(), `${input.join('\n')}\n`, 'the upload as sent');

      const created = await sdk.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { job: 'nightly' },
      });
      assert.match(created.id, /^batch_[0-9a-z]{26}$/);
      assert.equal(created.status, 'in_progress');
      assert.deepEqual(created.request_counts, { total: 4, completed: 0, failed: 0 });
      assert.deepEqual(created.metadata, { job: 'nightly' });
      assert.equal(created.expires_at, created.created_at + 24 * 60 * 60);
      assert.equal(created.errors, null);

      const done = await untilDone(worker, sdk, created.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.request_counts, { total: 4, completed: 3, failed: 1 });
      assert.ok(done.completed_at);
      const output = await linesOf(sdk, done.output_file_id);
      assert.deepEqual(
        output.map((l) => l.custom_id),
        ['gpt', 'mock', 'claude'],
        'submission order',
      );
      for (const l of output) {
        assert.match(l.id, /^batch_req_/);
        assert.equal(l.error, null);
        assert.equal(l.response.status_code, 200);
        assert.match(l.response.request_id, /^crg_/);
        const body = l.response.body;
        assert.equal(body.object, 'chat.completion');
        assert.equal(body.choices[0].index, 0);
        assert.equal(body.choices[0].message.role, 'assistant');
        assert.equal(typeof body.choices[0].message.content, 'string');
        assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
      }
      const [gpt, mock, claude] = output;
      assert.equal(gpt.response.body.model, 'gpt-4o-mini');
      assert.equal(gpt.response.body.choices[0].finish_reason, 'length', 'max_completion_tokens 3 cut it');
      assert.equal(claude.response.body.model, 'claude-sonnet-4-5-20250929');
      assert.equal(claude.response.body.choices[0].finish_reason, 'length');
      assert.equal(mock.response.body.model, 'svc-mock');
      const errorsOut = await linesOf(sdk, done.error_file_id);
      assert.deepEqual(
        errorsOut.map((l) => [l.custom_id, l.response, l.error.code]),
        [['fails', null, 'invalid_request_error']],
      );

      // The translation reached the providers: the system message, the token limit, stop, temperature.
      const sent = anthropic()
        .batches()
        .flatMap((b) => b.requests);
      assert.deepEqual(sent.at(-1)?.params, {
        model: 'claude-sonnet-4-5-20250929',
        max_tokens: 2,
        messages: [{ role: 'user', content: 'Name a barge.' }],
      });
      const mockCargo = await h.db.database.read
        .selectFrom('cargo_requests as q')
        .innerJoin('compat_cargo as m', 'm.cargo_id', 'q.cargo_id')
        .select(['q.request', 'q.metadata as stored', 'm.metadata'])
        .where('m.metadata', 'like', '%"custom_id":"mock"%')
        .executeTakeFirstOrThrow();
      assert.equal(mockCargo.stored, null, 'the metadata is kept beside the cargo, not after its request');
      assert.deepEqual(JSON.parse(mockCargo.request).requests[0].modelInput, {
        max_tokens: 40,
        stop_sequences: ['END'],
        temperature: 0.5,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Hello' },
              { type: 'text', text: ' river' },
            ],
          },
        ],
        system: 'Answer briefly.',
      });
      assert.deepEqual(JSON.parse(mockCargo.metadata ?? 'null'), { batch_id: created.id, custom_id: 'mock' });

      const listed = [];
      for await (const batch of sdk.batches.list({ limit: 1 })) listed.push(batch.id);
      assert.deepEqual(listed, [created.id]);
      const files = [];
      for await (const f of sdk.files.list()) files.push(f.purpose);
      assert.deepEqual(files.sort(), ['batch', 'batch_output', 'batch_output']);
      assert.deepEqual(await sdk.files.delete(file.id), { id: file.id, object: 'file', deleted: true });
      await assert.rejects(sdk.files.retrieve(file.id), OpenAI.NotFoundError);
      assert.equal((await sdk.batches.retrieve(created.id)).status, 'completed', 'a batch outlives its input file');
    });

    test('a bad line fails the batch with 1-based line numbers naming the field, and creates no cargo', async () => {
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = client(key);
      const input = [
        line('ok', chat('svc-mock', 'fine')),
        line('two', chat('svc-mock', 'two', { n: 2 })),
        '{not json',
        '',
        line('tools', chat('svc-mock', 'x', { tools: [{ type: 'function', function: { name: 'f' } }] })),
        line('ok', chat('svc-mock', 'again')),
        line('image', {
          model: 'svc-mock',
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
          ],
        }),
        line('hot', chat('svc-mock', 'hot', { temperature: 1.5 })),
        JSON.stringify({ custom_id: 'get', method: 'GET', url: '/v1/chat/completions', body: chat('svc-mock', 'x') }),
        line('format', chat('svc-mock', 'x', { response_format: { type: 'json_object' } })),
        line('probs', chat('svc-mock', 'x', { logprobs: true })),
      ];
      const file = await sdk.files.create({ file: await jsonl(input), purpose: 'batch' });
      const batch = await sdk.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      assert.equal(batch.status, 'failed');
      assert.ok(batch.failed_at);
      assert.deepEqual(batch.request_counts, { total: 0, completed: 0, failed: 0 });
      assert.deepEqual(
        batch.errors?.data?.map((e) => [e.line, e.code, e.param]),
        [
          [2, 'unsupported_parameter', 'body.n'],
          [3, 'invalid_json_line', null],
          [5, 'unsupported_parameter', 'body.tools'],
          [6, 'duplicate_custom_id', 'custom_id'],
          [7, 'unsupported_parameter', 'body.messages[0].content[0]'],
          [8, 'invalid_value', 'body.temperature'],
          [9, 'invalid_method', 'method'],
          [10, 'unsupported_parameter', 'body.response_format'],
          [11, 'unsupported_parameter', 'body.logprobs'],
        ],
      );
      assert.match(batch.errors?.data?.[5]?.message ?? '', /body\.temperature must be <= 1/);
      assert.deepEqual(await sdk.batches.retrieve(batch.id), batch);
      const cargo = (await fetch(`${h.app.url}/cargo`, { headers: { 'x-api-key': key } }).then((r) => r.json())) as {
        data: unknown[];
      };
      assert.deepEqual(cargo.data, [], 'no cargo was created');
      await assert.rejects(sdk.batches.cancel(batch.id), OpenAI.BadRequestError);
    });

    test('cancel: pending requests are canceled (batch_cancelled in the error file); cancelling, then cancelled', async () => {
      const { worker } = await h.worker({ latencyMs: 120_000, settings: { batchMaxWaitMs: 0 } });
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = client(key);
      const first = await sdk.files.create({
        file: await jsonl([line('sent', chat('svc-mock', 'already sent'))]),
        purpose: 'batch',
      });
      const running = await sdk.batches.create({
        input_file_id: first.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      await worker.runUntilIdle();
      const second = await sdk.files.create({
        file: await jsonl([line('a', chat('svc-mock', 'a')), line('b', chat('svc-mock', 'b'))]),
        purpose: 'batch',
      });
      const pending = await sdk.batches.create({
        input_file_id: second.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });

      const cancelled = await sdk.batches.cancel(pending.id);
      assert.equal(cancelled.status, 'cancelled', 'nothing of it was with a provider');
      assert.ok(cancelled.cancelled_at);
      assert.equal(cancelled.output_file_id, null);
      const lines = await linesOf(sdk, cancelled.error_file_id);
      assert.deepEqual(
        lines.map((l) => [l.custom_id, l.error.code]),
        [
          ['a', 'batch_cancelled'],
          ['b', 'batch_cancelled'],
        ],
      );

      assert.equal((await sdk.batches.cancel(running.id)).status, 'cancelling', 'its request is with the provider');
      clock.advance(121_000);
      await worker.runUntilIdle();
      const ended = await untilDone(worker, sdk, running.id);
      assert.equal(ended.status, 'cancelled');
      assert.deepEqual(ended.request_counts, { total: 1, completed: 1, failed: 0 });
      assert.equal(ended.error_file_id, null);
      assert.deepEqual(
        (await linesOf(sdk, ended.output_file_id)).map((l) => l.custom_id),
        ['sent'],
      );
    });

    test('errors in OpenAI’s shape: a refused key, unknown ids, a bad create, a bad upload', async () => {
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = client(key);
      await assert.rejects(client(`barge_sk_${'y'.repeat(32)}`).batches.list(), (err: unknown) => {
        assert.ok(err instanceof OpenAI.AuthenticationError);
        assert.equal(err.status, 401);
        assert.equal(err.code, 'invalid_api_key');
        assert.equal(err.type, 'invalid_request_error');
        return true;
      });
      for (const call of [
        () => sdk.batches.retrieve('batch_01jd5q3k8m9x2v4w6y8z0a1b2d'),
        () => sdk.files.retrieve('file-01jd5q3k8m9x2v4w6y8z0a1b2c'),
        () => sdk.files.content('file-nope'),
        () => sdk.files.delete('file-01jd5q3k8m9x2v4w6y8z0a1b2c'),
      ]) {
        await assert.rejects(call(), (err: unknown) => {
          assert.ok(err instanceof OpenAI.NotFoundError, String(err));
          assert.equal(err.type, 'invalid_request_error');
          return true;
        });
      }
      await assert.rejects(
        sdk.batches.create({
          input_file_id: 'file-01jd5q3k8m9x2v4w6y8z0a1b2c',
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        }),
        (err: unknown) => {
          assert.ok(err instanceof OpenAI.BadRequestError);
          assert.equal(err.param, 'input_file_id');
          return true;
        },
      );
      const file = await sdk.files.create({ file: await jsonl([line('x', chat('svc-mock', 'x'))]), purpose: 'batch' });
      await assert.rejects(
        sdk.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings' as never, completion_window: '24h' }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'endpoint',
      );
      await assert.rejects(
        sdk.batches.create({
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          metadata: { k: 'v'.repeat(513) },
        }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'metadata.k',
      );
      await assert.rejects(
        sdk.files.create({ file: await toFile(Buffer.from('{}\n'), 'requests.txt'), purpose: 'batch' }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'file' && /\.jsonl/.test(err.message),
      );
      await assert.rejects(
        sdk.files.create({ file: await jsonl(['{}']), purpose: 'fine-tune' }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'purpose',
      );
      await assert.rejects(
        sdk.batches.list({ limit: 101 }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'limit',
      );
    });
  });
}
