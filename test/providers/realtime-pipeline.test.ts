/**
 * The openai-compatible provider through the pipeline, on every backend: cargo loaded over barge's
 * HTTP API, batched, their requests stored and sent one by one to the real-time endpoint emulator
 * on loopback, answered, retried or failed, and read back as results with their cost. The workers
 * are driven with a ManualClock (runUntilIdle), so retries and the 24 h expiry take no waiting.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { REALTIME_EXPIRED_ERROR } from '../../src/domain/realtime-requests.js';
import { roundUsd } from '../../src/domain/usage.js';
import type { Service } from '../../src/service.js';
import { createProjectWithKey, fetchResult, loadCargo, storedCargo } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { settleCargo } from '../helpers/pipeline.js';
import { REALTIME_MODEL, REALTIME_PRICES, realtimeBody, realtimeConfig, SERVED_MODEL } from '../helpers/realtime.js';
import { type RealtimeEmulator, startRealtimeEmulator } from '../helpers/realtime-emulator.js';
import { startReceiver } from '../helpers/receiver.js';

const API_KEY = 'sk-gpu-one-key';

for (const backend of await backends()) {
  describe(`openai-compatible through the pipeline on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 28, 12));
    let emu: RealtimeEmulator;
    const config: Partial<Config> = {};
    before(async () => {
      emu = await startRealtimeEmulator({ apiKey: API_KEY, models: [SERVED_MODEL], keepBodies: true });
      Object.assign(
        config,
        realtimeConfig({ baseUrl: emu.baseURL, maxConcurrency: 4, timeoutMs: 5_000, apiKey: API_KEY }),
      );
    });
    after(() => emu?.close());
    const h = harness(backend, { clock, config });

    let worker: Service;
    let key: string;
    before(async () => {
      ({ worker } = await h.worker());
      ({ key } = await createProjectWithKey(h.db.database, { now: clock.now() }));
    });
    const load = (body: unknown) => loadCargo(h.app, key, body);
    const settle = (ids: string[], stepMs = 2_000, tries = 10) =>
      settleCargo(worker, clock, h.db.database, ids, { stepMs, tries });
    const bodyOf = (text: string) => emu.bodies().find((b) => JSON.stringify(b.messages).includes(`"${text}"`));

    test('GET /models lists the model with its route and real-time prices in the batch prices', async () => {
      const res = await h.app.request('GET', '/models', { key });
      assert.equal(res.status, 200, res.text);
      const model = res.body.data.find((m: { id: string }) => m.id === REALTIME_MODEL);
      assert.equal(model.provider, 'openai-compatible');
      assert.equal(model.provider_model, SERVED_MODEL);
      assert.equal(model.prices_usd_per_mtok.batch_input, REALTIME_PRICES.input);
      assert.equal(model.prices_usd_per_mtok.batch_output, REALTIME_PRICES.output);
    });

    test('a cargo and a records cargo are sent one request each, translated, and answered in the message shape', async () => {
      const one = await load(
        realtimeBody('plain hello', { system: 'be brief', stop_sequences: ['END'], temperature: 0.2 }),
      );
      const records = await load({
        params: { model: REALTIME_MODEL, max_tokens: 20 },
        records: ['r1', 'r2', 'r3'].map((recordId) => ({
          recordId,
          modelInput: { messages: [{ role: 'user', content: `record ${recordId}` }] },
        })),
      });
      await settle([one, records]);

      const sent = bodyOf('plain hello');
      assert.ok(sent, 'the endpoint got the request');
      assert.deepEqual(sent, {
        model: SERVED_MODEL,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'plain hello' },
        ],
        max_tokens: 50,
        stop: ['END'],
        temperature: 0.2,
      });
      assert.equal(bodyOf('record r2')?.max_tokens, 20);

      const result = await fetchResult(h.app, key, one);
      assert.equal(result.success, true, result.error_message);
      assert.equal(result.response.type, 'message');
      assert.equal(result.response.model, SERVED_MODEL);
      assert.equal(result.response.stop_reason, 'end_turn');
      assert.deepEqual(result.response.content, [{ type: 'text', text: 'echo: plain hello' }]);

      const recordsResult = await fetchResult(h.app, key, records);
      assert.equal(recordsResult.success, true, recordsResult.error_message);
      const lines = recordsResult.response.records as { recordId: string; response: { content: { text: string }[] } }[];
      assert.deepEqual(
        lines.map((l) => [l.recordId, l.response.content[0]?.text]),
        [
          ['r1', 'echo: record r1'],
          ['r2', 'echo: record r2'],
          ['r3', 'echo: record r3'],
        ],
      );
      for (const text of ['plain hello', 'record r1', 'record r2', 'record r3']) assert.equal(emu.tries(text), 1, text);
      // The collected batch's request rows are gone.
      const left = await h.db.database.read.selectFrom('realtime_requests').select('custom_id').execute();
      assert.deepEqual(left, []);
    });

    test('cost is the standard cost at the catalog real-time prices, even where batch prices are listed', async () => {
      const { key: own } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const id = await loadCargo(h.app, own, realtimeBody('priced question'));
      await settle([id]);
      const result = await fetchResult(h.app, own, id);
      const { input_tokens: input, output_tokens: output } = result.response.usage;
      assert.ok(input > 0 && output > 0);
      const standard = roundUsd((input * REALTIME_PRICES.input + output * REALTIME_PRICES.output) / 1_000_000);
      const res = await h.app.request('GET', '/usage', { key: own });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.totals.cost_usd, standard);
      assert.equal(res.body.totals.standard_cost_usd, standard);
      assert.equal(res.body.totals.savings_usd, 0);
    });

    test('429 and 500 are retried, waiting as long as Retry-After says, then the answer is stored', async () => {
      emu.script('flaky', [{ status: 429, retryAfterS: 30, openaiShape: true }, { status: 500 }]);
      const id = await load(realtimeBody('flaky'));
      clock.advance(2_000);
      await worker.runUntilIdle();
      assert.equal(emu.tries('flaky'), 1);
      // Retry-After: 30 s. Ten seconds on, it has not been sent again.
      clock.advance(10_000);
      await worker.runUntilIdle();
      assert.equal(emu.tries('flaky'), 1);
      clock.advance(21_000);
      await worker.runUntilIdle();
      assert.equal(emu.tries('flaky'), 2);
      // The 500's backoff (about 2 s), then the answer.
      await settle([id], 3_000, 5);
      assert.equal(emu.tries('flaky'), 3);
      const result = await fetchResult(h.app, key, id);
      assert.equal(result.success, true, result.error_message);
      assert.deepEqual(result.response.content, [{ type: 'text', text: 'echo: flaky' }]);
    });

    test('a 400 fails the cargo at once with the endpoint message', async () => {
      emu.script('too long', [{ status: 400, message: "This model's maximum context length is 8192 tokens" }]);
      const id = await load(realtimeBody('too long'));
      await settle([id]);
      assert.equal(emu.tries('too long'), 1);
      const result = await fetchResult(h.app, key, id);
      assert.equal(result.success, false);
      assert.equal(result.error_message, "BadRequestError: This model's maximum context length is 8192 tokens");
    });

    test('a webhook delivers the answer as for any provider', async () => {
      const receiver = await startReceiver();
      try {
        const id = await load({ ...realtimeBody('webhook please'), callback_url: `${receiver.url}/hook` });
        await settle([id]);
        for (let i = 0; i < 10 && receiver.received.length === 0; i++) {
          clock.advance(1000);
          await worker.runUntilIdle();
        }
        assert.equal(receiver.received.length, 1);
        assert.equal((await storedCargo(h.db.database, id)).status, 'callback_delivered');
        const body = JSON.parse(receiver.received[0]?.body ?? '{}');
        assert.equal(body.cargo_id, id);
        assert.equal(body.success, true);
        assert.deepEqual(body.response, (await fetchResult(h.app, key, id)).response);
        assert.deepEqual(body.response.content, [{ type: 'text', text: 'echo: webhook please' }]);
      } finally {
        await receiver.close();
      }
    });

    test('a request still failing 24 h after submit expires', async () => {
      // The endpoint answers 503 with Retry-After of an hour, again and again.
      emu.script(
        'always down',
        Array.from({ length: 40 }, () => ({ status: 503, retryAfterS: 3600 })),
      );
      const id = await load(realtimeBody('always down'));
      await settle([id], 3_600_000, 30);
      const tries = emu.tries('always down');
      assert.ok(tries >= 23 && tries <= 25, `tried ${tries} times in a day`);
      const result = await fetchResult(h.app, key, id);
      assert.equal(result.success, false);
      assert.ok(result.error_message.startsWith(REALTIME_EXPIRED_ERROR), result.error_message);
      assert.match(result.error_message, /the last try: InternalServerError: scripted 503/);
      assert.equal((await storedCargo(h.db.database, id)).status, 'failed');
    });
  });
}
