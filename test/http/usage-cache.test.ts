/**
 * Cache tokens priced right, on every backend: the Anthropic emulator reports prompt-cache writes
 * (5-minute and 1-hour) and reads as the Message Batches API does; each result keeps them, costed
 * at the shipped catalog's batch and real-time cache prices, and GET /usage sums them. Every figure
 * below is worked out by hand from Claude Sonnet 4.5's prices (USD per million tokens):
 *
 *   |            | input | output | 5m write | 1h write | read |
 *   | batch      |  1.5  |  7.5   |  1.875   |    3     | 0.15 |
 *   | real time  |  3    |  15    |  3.75    |    6     | 0.3  |
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { hasResult } from '../../src/domain/lifecycle.js';
import { POLL_MAX_MS } from '../../src/domain/polling.js';
import type { Service } from '../../src/service.js';
import { type AnthropicEmulator, type BatchRequest, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { createProjectWithKey, fetchResult, loadCargo, testConfig } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const SONNET = 'claude-sonnet-4-5';

/** The usage the emulator answers for a request, by its (last) user message. */
const USAGE: Record<string, Record<string, unknown>> = {
  // Writes a 2,000-token prefix, 500 of them for an hour.
  writer: {
    input_tokens: 100,
    output_tokens: 20,
    cache_creation_input_tokens: 2000,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 1500, ephemeral_1h_input_tokens: 500 },
  },
  // Reads it.
  reader: { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 2000 },
  // Two records: one reads, one writes 1,000 tokens without saying how long for (a 5-minute write).
  'record reader': { input_tokens: 50, output_tokens: 10, cache_read_input_tokens: 2000 },
  'record writer': { input_tokens: 50, output_tokens: 10, cache_creation_input_tokens: 1000 },
};

function outcome(request: BatchRequest) {
  const messages = request.params.messages as { content: string }[];
  const usage = USAGE[messages.at(-1)?.content ?? ''];
  return usage ? { type: 'succeeded' as const, message: { usage } } : undefined;
}

for (const backend of await backends()) {
  describe(`cache tokens and their cost on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
    const config: Partial<Config> = {};
    let emulator: AnthropicEmulator;
    before(async () => {
      emulator = await startAnthropicEmulator({ outcome });
      config.providers = {
        ...testConfig().providers,
        anthropic: { apiKey: emulator.apiKey, baseUrl: emulator.url, version: '2023-06-01' },
      };
    });
    after(async () => {
      await emulator.close();
    });
    const h = harness(backend, { clock, config });
    let worker: Service | undefined;
    const run = async () => {
      worker ??= (await h.worker()).worker;
      await worker.runUntilIdle();
    };
    const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

    test('each result keeps its cache writes and reads, costed at the cache prices; GET /usage sums every kind', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const params = { model: SONNET, max_tokens: 100 };
      const ids = [
        await loadCargo(h.app, key, { params: { ...params, ...ask('writer') } }),
        await loadCargo(h.app, key, { params: { ...params, ...ask('reader') } }),
        await loadCargo(h.app, key, {
          params,
          records: [
            { recordId: 'a', modelInput: ask('record reader') },
            { recordId: 'b', modelInput: ask('record writer') },
          ],
        }),
      ];
      // The batch flushes after its wait, then the emulator ends it and the poller collects.
      clock.advance(60_000);
      await run();
      emulator.endAll();
      for (let step = 0; step < 5; step++) {
        clock.advance(POLL_MAX_MS);
        await run();
      }
      for (const id of ids) {
        const { status } = (await h.app.request('GET', `/cargo/${id}/tracking`, { key })).body;
        assert.ok(hasResult(status), `${id} is ${status}`);
      }
      const [writer] = ids as [string, string, string];
      assert.deepEqual((await fetchResult(h.app, key, writer)).response.usage, USAGE.writer);

      const rows = await h.db.database.read
        .selectFrom('results')
        .select([
          'cargo_id',
          'input_tokens',
          'output_tokens',
          'cache_creation_input_tokens',
          'cache_creation_1h_input_tokens',
          'cache_read_input_tokens',
          'cost_usd',
          'standard_cost_usd',
        ])
        .where('cargo_id', 'in', ids)
        .execute();
      const stored = ids.map((id) => {
        const r = rows.find((row) => row.cargo_id === id);
        assert.ok(r, id);
        return [
          Number(r.input_tokens),
          Number(r.output_tokens),
          Number(r.cache_creation_input_tokens),
          Number(r.cache_creation_1h_input_tokens),
          Number(r.cache_read_input_tokens),
          r.cost_usd,
          r.standard_cost_usd,
        ];
      });
      const close = (actual: unknown, expected: number, what: string) =>
        assert.ok(Math.abs((actual as number) - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
      // writer: 100 × 1.5 + 20 × 7.5 + 1,500 × 1.875 + 500 × 3 = 4,612.5 (batch);
      //         100 × 3 + 20 × 15 + 1,500 × 3.75 + 500 × 6 = 9,225 (real time), per million.
      // reader: 120 × 1.5 + 30 × 7.5 + 2,000 × 0.15 = 705; 120 × 3 + 30 × 15 + 2,000 × 0.3 = 1,410.
      // records: (50 × 1.5 + 10 × 7.5) × 2 + 2,000 × 0.15 + 1,000 × 1.875 = 2,475;
      //          (50 × 3 + 10 × 15) × 2 + 2,000 × 0.3 + 1,000 × 3.75 = 4,950.
      const expected = [
        [100, 20, 2000, 500, 0, 4612.5e-6, 9225e-6],
        [120, 30, 0, 0, 2000, 705e-6, 1410e-6],
        [100, 20, 1000, 0, 2000, 2475e-6, 4950e-6],
      ];
      for (const [i, row] of stored.entries()) {
        const want = expected[i] as number[];
        assert.deepEqual(row.slice(0, 5), want.slice(0, 5), `tokens of ${ids[i]}`);
        close(row[5], want[5] as number, `cost of ${ids[i]}`);
        close(row[6], want[6] as number, `standard cost of ${ids[i]}`);
      }

      const day = new Date(clock.now()).toISOString().slice(0, 10);
      const res = await h.app.request('GET', `/usage?from=${day}&to=${day}`, { key });
      assert.equal(res.status, 200, res.text);
      const counts = {
        cargo: 3,
        requests: 4,
        input_tokens: 320,
        output_tokens: 70,
        cache_creation_input_tokens: 3000,
        cache_read_input_tokens: 4000,
        // 4,612.5 + 705 + 2,475 = 7,792.5 and 9,225 + 1,410 + 4,950 = 15,585, per million.
        cost_usd: 0.0077925,
        standard_cost_usd: 0.015585,
      };
      assert.deepEqual(res.body, {
        data: [{ date: day, model: SONNET, ...counts }],
        totals: { ...counts, savings_usd: 0.0077925 },
        // No spend budget: none set, and no default.
        budgets: [],
      });
    });
  });
}
