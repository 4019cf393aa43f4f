/**
 * The OpenAI provider end to end: cargo loaded over barge's HTTP API, batched, uploaded and created
 * at the OpenAI emulator on loopback, polled, collected and read back as results, on every backend.
 * In-process suites drive the workers with a ManualClock (the emulator shares it); the last suite
 * kills a real `barge serve` while its create call is held open at the emulator.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { customIdFor } from '../../src/domain/custom-ids.js';
import { roundUsd } from '../../src/domain/usage.js';
import type { Service } from '../../src/service.js';
import { createProjectWithKey, fetchResult, loadCargo, storedCargo, testConfig } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness, serveHarness } from '../helpers/harness.js';
import { assertAnsweredMessages, killDuringHeldCreate } from '../helpers/held-create.js';
import { type InputLine, type OpenAIEmulator, startOpenAIEmulator } from '../helpers/openai-emulator.js';
import { batchOfCargo, settleCargo } from '../helpers/pipeline.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/wait.js';

/** A tiny base64 PNG header and PDF header: what arrives is checked, not what they depict. */
const PNG = 'iVBORw0KGgo=';
const PDF = 'JVBERi0xLjQK';

const CATALOG = JSON.parse(readFileSync(new URL('../../models/catalog.json', import.meta.url), 'utf8')) as {
  models: { id: string; prices_usd_per_mtok: { batch_input: number; batch_output: number } }[];
};

/** The emulator's uploaded input file of an emulator batch, as parsed lines. */
function inputLines(emu: OpenAIEmulator, batchId: string): InputLine[] {
  const batch = emu.batch(batchId);
  assert.ok(batch, `no emulator batch ${batchId}`);
  const file = emu.file(batch.inputFileId);
  assert.ok(file, 'the input file is stored');
  return file.content
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as InputLine);
}

const firstUserText = (line: InputLine) =>
  String((line.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user')?.content);

for (const backend of await backends()) {
  describe(`OpenAI through the pipeline on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    let emu: OpenAIEmulator;
    const config: Partial<Config> = {};
    before(async () => {
      emu = await startOpenAIEmulator({ clock: () => clock.now() });
      config.providers = { ...testConfig().providers, openai: { apiKey: emu.apiKey, baseUrl: emu.baseURL } };
    });
    after(async () => {
      await emu?.close();
    });
    const h = harness(backend, { clock, config });

    const load = (key: string, body: unknown) => loadCargo(h.app, key, body);
    const result = (key: string, id: string) => fetchResult(h.app, key, id);
    const cargoRow = (id: string) => storedCargo(h.db.database, id);
    const batchRow = (cargoId: string) => batchOfCargo(h.db.database, cargoId);
    /** The emulator batch tagged with the barge batch of this cargo (exactly one). */
    const emuBatchOf = async (cargoId: string) => {
      const row = await batchRow(cargoId);
      const tagged = emu.batches().filter((b) => b.metadata?.barge_batch_id === row.id);
      assert.equal(tagged.length, 1, 'one emulator batch carries the barge batch id');
      const batch = tagged[0];
      assert.ok(batch);
      assert.equal(row.job_id, batch.id);
      return batch;
    };
    /** Flushes the groups (OpenAI's 60 s wait) and runs upload + create. */
    const submit = async (worker: Service) => {
      clock.advance(60_000);
      await worker.runUntilIdle();
    };
    /** Polls until every cargo has finished (the poller backs off with the job's age). */
    const settle = (worker: Service, ids: string[]) =>
      settleCargo(worker, clock, h.db.database, ids, { stepMs: 30_000, tries: 20 });

    test('a catalog id and openai/<model> reach the emulator with translated bodies; results come back translated', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const catalogId = await load(key, {
        params: {
          model: 'gpt-4o-mini',
          system: 'Answer briefly.',
          messages: [{ role: 'user', content: 'catalog route please' }],
          max_tokens: 3,
          stop_sequences: ['END', 'STOP'],
          temperature: 0.25,
          top_p: 0.5,
        },
      });
      const qualified = await load(key, {
        params: {
          model: 'openai/gpt-4o-2024-08-06',
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'qualified route' }] },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: 'go on' },
          ],
          max_tokens: 100,
        },
      });
      await submit(worker);
      assert.equal((await cargoRow(catalogId)).status, 'processing');

      const a = await emuBatchOf(catalogId);
      const b = await emuBatchOf(qualified);
      assert.notEqual(a.id, b.id, 'one model per batch');
      for (const batch of [a, b]) {
        const create = emu.log.find(
          (r) =>
            r.method === 'POST' &&
            r.path === '/v1/batches' &&
            r.status === 200 &&
            (r.body as any).metadata?.barge_batch_id === batch.metadata?.barge_batch_id,
        );
        assert.ok(create, 'the create call is logged');
        assert.deepEqual(create.body, {
          input_file_id: batch.inputFileId,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          metadata: { barge_batch_id: (await batchRow(batch === a ? catalogId : qualified)).id },
        });
      }
      const [lineA] = inputLines(emu, a.id);
      assert.ok(lineA);
      assert.equal(lineA.method, 'POST');
      assert.equal(lineA.url, '/v1/chat/completions');
      assert.deepEqual(lineA.body, {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: 'catalog route please' },
        ],
        max_completion_tokens: 3,
        stop: ['END', 'STOP'],
        temperature: 0.25,
        top_p: 0.5,
      });
      const [lineB] = inputLines(emu, b.id);
      assert.ok(lineB);
      assert.deepEqual(lineB.body, {
        model: 'gpt-4o-2024-08-06',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'qualified route' }] },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'go on' },
        ],
        max_completion_tokens: 100,
      });

      emu.endAll();
      await settle(worker, [catalogId, qualified]);
      const outputs = new Map<string, any>();
      for (const batch of [a, b]) {
        const out = emu.file(batch.outputFileId as string);
        assert.ok(out);
        for (const l of out.content.toString('utf8').split('\n').filter(Boolean)) {
          const line = JSON.parse(l);
          outputs.set(line.custom_id, line.response.body);
        }
      }
      for (const [cargoId, line, stop] of [
        [catalogId, lineA, 'max_tokens'],
        [qualified, lineB, 'end_turn'],
      ] as const) {
        const res = await result(key, cargoId);
        assert.equal(res.success, true);
        assert.equal(res.error_message, null);
        const completion = outputs.get(line.custom_id);
        assert.ok(completion, 'the emulator answered the line');
        assert.deepEqual(res.response, {
          id: completion.id,
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: completion.choices[0].message.content }],
          model: completion.model,
          stop_reason: stop,
          stop_sequence: null,
          usage: {
            input_tokens: completion.usage.prompt_tokens,
            cache_read_input_tokens: 0,
            output_tokens: completion.usage.completion_tokens,
          },
        });
      }
      assert.equal((await result(key, catalogId)).response.content[0].text, 'This is an');
      // Cleanup: the input files are deleted once the batches ended.
      for (const batch of [a, b]) assert.equal(emu.file(batch.inputFileId)?.deleted, true);
    });

    test('the full request surface arrives translated as pinned; tool calls, refusals and cached tokens come back as messages', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
      const findCity = { name: 'find_city', description: 'Finds a city.', input_schema: schema, strict: true };
      const single = await load(key, {
        params: {
          model: 'gpt-4o-mini',
          max_tokens: 200,
          system: [
            { type: 'text', text: 'You are a geographer.', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: 'Be exact.' },
          ],
          tools: [{ ...findCity, cache_control: { type: 'ephemeral' } }],
          tool_choice: { type: 'tool', name: 'find_city', disable_parallel_tool_use: true },
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
                {
                  type: 'document',
                  source: { type: 'base64', media_type: 'application/pdf', data: PDF },
                  title: 'atlas.pdf',
                },
                { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
                { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Paris is in France.' } },
                { type: 'text', text: 'Where is it?' },
              ],
            },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'Look it up.', signature: 'sig' },
                { type: 'redacted_thinking', data: 'opaque' },
                { type: 'text', text: 'Let me look.' },
                { type: 'tool_use', id: 'call_1', name: 'find_city', input: { city: 'Paris' } },
              ],
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'found' }] },
                { type: 'text', text: 'And again?', cache_control: { type: 'ephemeral' } },
              ],
            },
          ],
        },
      });
      const records = await load(key, {
        params: { model: 'gpt-4o-mini', max_tokens: 100, tools: [findCity] },
        records: [
          {
            recordId: 'any',
            modelInput: { tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'any' }] },
          },
          {
            recordId: 'format',
            modelInput: {
              tool_choice: { type: 'none' },
              output_config: { format: { type: 'json_schema', schema } },
              messages: [{ role: 'user', content: 'format' }],
            },
          },
          {
            recordId: 'auto',
            modelInput: {
              tool_choice: { type: 'auto' },
              messages: [
                { role: 'user', content: 'auto' },
                { role: 'assistant', content: [{ type: 'tool_use', id: 'call_2', name: 'find_city', input: {} }] },
                {
                  role: 'user',
                  content: [{ type: 'tool_result', tool_use_id: 'call_2', content: 'none', is_error: true }],
                },
              ],
            },
          },
        ],
      });
      const singleId = customIdFor(single, null);
      // The emulator's answers: arguments that are not JSON, with cached prompt tokens; a refusal.
      emu.setOutcome(singleId, {
        type: 'succeeded',
        body: {
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: null,
                refusal: null,
                tool_calls: [
                  { id: 'call_9', type: 'function', function: { name: 'find_city', arguments: '{"city": "Par' } },
                ],
              },
              logprobs: null,
              finish_reason: 'tool_calls',
            },
          ],
          usage: {
            prompt_tokens: 1200,
            completion_tokens: 9,
            total_tokens: 1209,
            prompt_tokens_details: { cached_tokens: 1024 },
          },
        },
      });
      emu.setOutcome(customIdFor(records, 1), {
        type: 'succeeded',
        body: {
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
        },
      });
      await submit(worker);
      const lines = new Map(inputLines(emu, (await emuBatchOf(single)).id).map((line) => [line.custom_id, line.body]));
      const tool = {
        type: 'function',
        function: { name: 'find_city', description: 'Finds a city.', parameters: schema, strict: true },
      };
      assert.deepEqual(lines.get(singleId), {
        model: 'gpt-4o-mini',
        max_completion_tokens: 200,
        messages: [
          {
            role: 'system',
            content: [
              { type: 'text', text: 'You are a geographer.' },
              { type: 'text', text: 'Be exact.' },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
              { type: 'image_url', image_url: { url: 'https://example.com/map.png' } },
              { type: 'file', file: { filename: 'atlas.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
              { type: 'file', file: { filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
              { type: 'text', text: 'Paris is in France.' },
              { type: 'text', text: 'Where is it?' },
            ],
          },
          {
            role: 'assistant',
            content: [{ type: 'text', text: 'Let me look.' }],
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'find_city', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'found' }] },
          { role: 'user', content: [{ type: 'text', text: 'And again?' }] },
        ],
        tools: [tool],
        tool_choice: { type: 'function', function: { name: 'find_city' } },
        parallel_tool_calls: false,
      });
      assert.deepEqual(lines.get(customIdFor(records, 0)), {
        model: 'gpt-4o-mini',
        max_completion_tokens: 100,
        messages: [{ role: 'user', content: 'any' }],
        tools: [tool],
        tool_choice: 'required',
      });
      assert.deepEqual(lines.get(customIdFor(records, 1)), {
        model: 'gpt-4o-mini',
        max_completion_tokens: 100,
        messages: [{ role: 'user', content: 'format' }],
        tools: [tool],
        tool_choice: 'none',
        response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } },
      });
      assert.deepEqual(lines.get(customIdFor(records, 2)), {
        model: 'gpt-4o-mini',
        max_completion_tokens: 100,
        messages: [
          { role: 'user', content: 'auto' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'find_city', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_2', content: 'none' },
        ],
        tools: [tool],
        tool_choice: 'auto',
      });

      emu.endAll();
      await settle(worker, [single, records]);
      const one = await result(key, single);
      assert.equal(one.success, true, one.error_message);
      assert.deepEqual(one.response.content, [
        { type: 'tool_use', id: 'call_9', name: 'find_city', input: { arguments: '{"city": "Par' } },
      ]);
      assert.equal(one.response.stop_reason, 'tool_use');
      assert.deepEqual(one.response.usage, { input_tokens: 176, cache_read_input_tokens: 1024, output_tokens: 9 });
      const [anyTool, refused, auto] = (await result(key, records)).response.records;
      assert.equal(anyTool.success, true);
      assert.equal(anyTool.response.stop_reason, 'tool_use');
      assert.equal(anyTool.response.content.length, 1);
      assert.deepEqual(
        { ...anyTool.response.content[0], id: 'x' },
        { type: 'tool_use', id: 'x', name: 'find_city', input: {} },
      );
      assert.match(anyTool.response.content[0].id, /^call_/);
      assert.deepEqual(refused.response.content, [{ type: 'text', text: 'I cannot help with that.' }]);
      assert.equal(refused.response.stop_reason, 'refusal');
      assert.equal(auto.response.stop_reason, 'end_turn');
    });

    const plain = (text: string, extra: Record<string, unknown> = {}) => ({
      params: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], max_tokens: 100 },
      ...extra,
    });
    /** The custom_id of the input line whose user text is `text`. */
    const customIdOf = (lines: InputLine[], text: string) => {
      const line = lines.find((l) => firstUserText(l) === text);
      assert.ok(line, `no input line for ${text}`);
      return line.custom_id;
    };

    test('every request failed: completed with no output file, each cargo fails with the error file text', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const ids = [await load(key, plain('all-fail one')), await load(key, plain('all-fail two'))];
      await submit(worker);
      const batch = await emuBatchOf(ids[0] as string);
      assert.equal((await emuBatchOf(ids[1] as string)).id, batch.id);
      const lines = inputLines(emu, batch.id);
      emu.setOutcome(customIdOf(lines, 'all-fail one'), {
        type: 'errored',
        status_code: 400,
        error: { type: 'invalid_request_error', message: 'first one was refused' },
      });
      emu.setOutcome(customIdOf(lines, 'all-fail two'), {
        type: 'errored',
        status_code: 500,
        error: { type: 'server_error', message: 'second one broke' },
      });
      emu.endAll();
      assert.equal(batch.status, 'completed');
      assert.equal(batch.outputFileId, null, 'the trap: completed, yet no output file');
      await settle(worker, ids);
      const [one, two] = await Promise.all(ids.map((id) => result(key, id)));
      assert.deepEqual(
        [one.success, one.response, one.error_message],
        [false, null, 'invalid_request_error: first one was refused'],
      );
      assert.deepEqual([two.success, two.response, two.error_message], [false, null, 'server_error: second one broke']);
      assert.equal(emu.file(batch.inputFileId)?.deleted, true);
    });

    test('an errored line with status 400 fails its cargo with that text; a records cargo keeps input order', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const good = await load(key, plain('mixed good'));
      const bad = await load(key, plain('mixed bad'));
      const recordIds = ['zulu', 'alpha', 'mike'];
      const records = await load(key, {
        params: { model: 'gpt-4o-mini', max_tokens: 100 },
        records: recordIds.map((recordId) => ({
          recordId,
          modelInput: { messages: [{ role: 'user', content: `record ${recordId}` }] },
        })),
      });
      await submit(worker);
      const batch = await emuBatchOf(good);
      const lines = inputLines(emu, batch.id);
      assert.equal(lines.length, 5);
      const refusal = {
        type: 'errored' as const,
        status_code: 400,
        error: { type: 'invalid_request_error', message: "Invalid value for 'temperature'." },
      };
      emu.setOutcome(customIdOf(lines, 'mixed bad'), refusal);
      emu.setOutcome(customIdOf(lines, 'record alpha'), refusal);
      emu.endAll();
      await settle(worker, [good, bad, records]);

      assert.equal((await result(key, good)).success, true);
      const failed = await result(key, bad);
      assert.equal(failed.success, false);
      assert.equal(failed.error_message, "invalid_request_error: Invalid value for 'temperature'.");
      const listed = await result(key, records);
      assert.equal(listed.success, false);
      assert.equal(listed.error_message, '1 of 3 records failed');
      assert.equal(listed.response.type, 'records');
      assert.deepEqual(
        listed.response.records.map((r: { recordId: string; success: boolean; error: string | null }) => [
          r.recordId,
          r.success,
          r.error,
        ]),
        [
          ['zulu', true, null],
          ['alpha', false, "invalid_request_error: Invalid value for 'temperature'."],
          ['mike', true, null],
        ],
      );
      assert.equal(listed.response.records[0].response.type, 'message');
      assert.equal(listed.response.records[0].response.model, 'gpt-4o-mini');
    });

    test('an expired batch: finished requests succeed from the partial output, the rest fail as expired', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const done = await load(key, plain('expiring done'));
      const never = await load(key, plain('expiring never ran'));
      await submit(worker);
      const batch = await emuBatchOf(done);
      emu.step(batch.id); // validating → in_progress
      emu.setOutcome(customIdOf(inputLines(emu, batch.id), 'expiring done'), { type: 'succeeded' });
      emu.expire(batch.id);
      assert.equal(batch.status, 'expired');
      assert.ok(batch.outputFileId && batch.errorFileId);
      await settle(worker, [done, never]);
      const ok = await result(key, done);
      assert.equal(ok.success, true);
      assert.equal(ok.response.type, 'message');
      const expired = await result(key, never);
      assert.equal(expired.success, false);
      assert.equal(expired.response, null);
      assert.equal(
        expired.error_message,
        'expired: This request could not be executed before the completion window expired.',
      );
      assert.equal((await cargoRow(never)).status, 'failed');
      assert.equal(emu.file(batch.inputFileId)?.deleted, true);
    });

    test('a batch failed as a whole (token_limit_exceeded) fails every cargo with that text', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const ids = [await load(key, plain('token limit one')), await load(key, plain('token limit two'))];
      await submit(worker);
      const message =
        'Enqueued token limit reached for gpt-4o-mini in organization org-test. Limit: 90,000 enqueued tokens.';
      emu.failNextValidation([{ code: 'token_limit_exceeded', line: null, message, param: null }]);
      emu.endAll();
      const batch = await emuBatchOf(ids[0] as string);
      assert.equal(batch.status, 'failed');
      await settle(worker, ids);
      for (const id of ids) {
        const res = await result(key, id);
        assert.equal(res.success, false);
        assert.equal(res.response, null);
        assert.equal(res.error_message, `errored: the provider failed the batch: token_limit_exceeded: ${message}`);
      }
      assert.equal(emu.file(batch.inputFileId)?.deleted, true);
    });

    test('a 429 with retry-after on upload, then on create, is waited out; one file, one batch', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      emu.faults.failNext(1, { method: 'POST', path: /^\/v1\/files$/, status: 429, retryAfterSeconds: 3 });
      emu.faults.failNext(1, { method: 'POST', path: /^\/v1\/batches$/, status: 429, retryAfterSeconds: 7 });
      const logFrom = emu.log.length;
      const id = await load(key, plain('rate limited'));
      await submit(worker);
      let row = await batchRow(id);
      assert.equal(row.job_id, null);
      assert.equal(row.next_check_at, clock.now() + 3000, 'the upload waits out retry-after');
      assert.match(String(row.last_error), /^requests: /);
      clock.advance(2999);
      await worker.runUntilIdle();
      assert.equal((await batchRow(id)).provider_state, null, 'nothing uploaded before retry-after');
      clock.advance(1);
      await worker.runUntilIdle();
      row = await batchRow(id);
      assert.equal(row.job_id, null);
      assert.ok(row.provider_state, 'the uploaded file is remembered');
      assert.equal(row.next_check_at, clock.now() + 7000, 'the create waits out retry-after');
      clock.advance(7000);
      await worker.runUntilIdle();
      const batch = await emuBatchOf(id);
      const calls = emu.log.slice(logFrom).filter((r) => r.method === 'POST');
      assert.deepEqual(
        calls.map((r) => [r.path, r.status]),
        [
          ['/v1/files', 429],
          ['/v1/files', 200],
          ['/v1/batches', 429],
          ['/v1/batches', 200],
        ],
      );
      assert.equal(
        JSON.parse(String(row.provider_state)).inputFileId,
        batch.inputFileId,
        'the retried create reuses the upload',
      );
      emu.endAll();
      await settle(worker, [id]);
      assert.equal((await result(key, id)).success, true);
    });

    test("GET /usage shows the emulator's tokens at the catalog's batch prices", async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const ids = [
        await load(key, plain('usage one, a longer prompt to count some more tokens than the other')),
        await load(
          key,
          plain('usage two', {
            params: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'usage two' }], max_tokens: 4 },
          }),
        ),
        await load(key, {
          params: { model: 'gpt-4o-mini', max_tokens: 100 },
          records: ['a', 'b'].map((recordId) => ({
            recordId,
            modelInput: { messages: [{ role: 'user', content: `usage record ${recordId}` }] },
          })),
        }),
      ];
      await submit(worker);
      const batch = await emuBatchOf(ids[0] as string);
      emu.endAll();
      await settle(worker, ids);
      let input = 0;
      let output = 0;
      const out = emu.file(batch.outputFileId as string);
      assert.ok(out);
      for (const l of out.content.toString('utf8').split('\n').filter(Boolean)) {
        const usage = JSON.parse(l).response.body.usage;
        input += usage.prompt_tokens;
        output += usage.completion_tokens;
      }
      assert.equal(batch.lines?.length, 4);
      const prices = CATALOG.models.find((m) => m.id === 'gpt-4o-mini')?.prices_usd_per_mtok as {
        input: number;
        output: number;
        batch_input: number;
        batch_output: number;
      };
      const cost = roundUsd((input * prices.batch_input + output * prices.batch_output) / 1_000_000);
      const standard = roundUsd((input * prices.input + output * prices.output) / 1_000_000);
      assert.ok(cost > 0);
      const res = await h.app.request('GET', '/usage', { key });
      assert.equal(res.status, 200, res.text);
      const counts = {
        cargo: 3,
        requests: 4,
        input_tokens: input,
        output_tokens: output,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cost_usd: cost,
        standard_cost_usd: standard,
      };
      assert.deepEqual(res.body, {
        data: [{ date: new Date(clock.now()).toISOString().slice(0, 10), model: 'gpt-4o-mini', ...counts }],
        totals: { ...counts, savings_usd: roundUsd(standard - cost) },
        // No spend budget: none set, and no default.
        budgets: [],
      });
    });

    test('a webhook delivers the translated OpenAI result to a loopback receiver', async () => {
      const receiver = await startReceiver();
      try {
        const { worker } = await h.worker();
        const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
        const id = await load(key, plain('webhook please', { callback_url: `${receiver.url}/hook` }));
        await submit(worker);
        emu.endAll();
        await settle(worker, [id]);
        for (let i = 0; i < 10 && receiver.received.length === 0; i++) {
          clock.advance(1000);
          await worker.runUntilIdle();
        }
        assert.equal(receiver.received.length, 1);
        assert.equal((await cargoRow(id)).status, 'callback_delivered');
        const post = receiver.received[0];
        assert.ok(post);
        assert.equal(post.url, '/hook');
        const body = JSON.parse(post.body);
        const stored = await result(key, id);
        assert.equal(body.cargo_id, id);
        assert.equal(body.success, true);
        assert.deepEqual(body.response, stored.response);
        assert.equal(body.response.type, 'message');
        assert.match(body.response.id, /^chatcmpl-/);
        assert.equal(body.response.model, 'gpt-4o-mini');
        assert.equal(body.response.stop_reason, 'end_turn');
        assert.equal(body.response.stop_sequence, null);
      } finally {
        await receiver.close();
      }
    });
  });
}

for (const backend of await backends({ childProcesses: true })) {
  describe(`a barge serve killed during an OpenAI create on ${backend.name}`, () => {
    let emu: OpenAIEmulator;
    before(async () => {
      // Real processes, real time: each retrieve moves a batch one status on.
      emu = await startOpenAIEmulator({ stepEveryRetrieves: 1 });
    });
    after(async () => {
      await emu?.close();
    });
    const s = serveHarness(backend);

    test('the batch the lost create made is adopted by the next process: one job, every cargo answered', async () => {
      const { key } = await createProjectWithKey(s.db.database);
      const env = {
        OPENAI_API_KEY: emu.apiKey,
        OPENAI_BASE_URL: emu.baseURL,
        BARGE_LEASE_MS: '2000',
      };
      const tagged = (batchId: string) => emu.batches().filter((b) => b.metadata?.barge_batch_id === batchId);
      const { batchId, ids, url } = await killDuringHeldCreate(s, {
        env,
        key,
        held: emu.holdNextCreate('on-arrival'),
        bodies: [0, 1, 2].map((i) => ({
          params: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `crash ${i}` }], max_tokens: 50 },
        })),
        whileHeld: (batchId) =>
          assert.equal(tagged(batchId).length, 1, 'the held create already made the batch at the provider'),
        timeoutMs: 20_000,
      });
      const jobs = tagged(batchId);
      const ran = jobs.filter((b) => b.status !== 'cancelling' && b.status !== 'cancelled');
      assert.equal(ran.length, 1, `one batch ran: ${JSON.stringify(jobs.map((b) => b.status))}`);
      assert.equal(ran[0]?.status, 'completed');
      assert.equal(
        (await batchOfCargo(s.db.database, ids[0] as string)).job_id,
        ran[0]?.id,
        'the adopted job is the one that ran',
      );
      assert.equal(jobs.length, 1, 'no second batch was created');
      for (const body of await assertAnsweredMessages(url, key, ids)) assert.equal(body.response.model, 'gpt-4o-mini');
      await waitFor('the input file to be deleted', () => emu.file(ran[0]?.inputFileId as string)?.deleted, Boolean, {
        timeoutMs: 5000,
      });
    });
  });
}
