/**
 * svc-mock's whole request surface through the API, on every backend: a batch over a system
 * prefix marked for caching with a forced tool, as a user tests their tool and cache code and
 * their cost accounting for free. The first request writes the prefix, the others read it; each
 * answer is one tool_use block whose input the tool's schema accepts; GET /usage sums the cache
 * tokens (svc-mock is never billed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv } from 'ajv';
import { ManualClock } from '../../src/domain/clock.js';
import { createProjectWithKey, fetchResult, loadCargo } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const PREFIX = Array.from({ length: 300 }, (_, i) => `rule${i}`).join(' ');
const SCHEMA = {
  type: 'object',
  properties: {
    category: { type: 'string', enum: ['shipping', 'billing', 'other'] },
    urgency: { type: 'integer', minimum: 1, maximum: 5 },
  },
  required: ['category', 'urgency'],
  additionalProperties: false,
};

for (const backend of await backends()) {
  describe(`svc-mock's request surface through the API on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
    const h = harness(backend, { clock });

    test('a cached prefix and a forced tool: one cache write, reads for the rest, schema-valid tool inputs', async () => {
      const { worker } = await h.worker({ latencyMs: 1000 });
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const ids: string[] = [];
      for (const ticket of ['my parcel is late', 'I was charged twice', 'hello there']) {
        ids.push(
          await loadCargo(h.app, key, {
            params: {
              model: 'svc-mock',
              max_tokens: 200,
              system: [{ type: 'text', text: PREFIX, cache_control: { type: 'ephemeral' } }],
              tools: [{ name: 'classify', description: 'The ticket category', input_schema: SCHEMA }],
              tool_choice: { type: 'tool', name: 'classify' },
              messages: [{ role: 'user', content: ticket }],
            },
          }),
        );
      }
      clock.advance(500);
      await worker.runUntilIdle();
      clock.advance(1000);
      await worker.runUntilIdle();

      const validate = new Ajv().compile(SCHEMA);
      const usages = [];
      for (const id of ids) {
        const result = await fetchResult(h.app, key, id);
        assert.equal(result.success, true);
        const message = result.response as {
          stop_reason: string;
          content: { type: string; name?: string; input?: unknown }[];
          usage: Record<string, number>;
        };
        assert.equal(message.stop_reason, 'tool_use');
        assert.equal(message.content.length, 1);
        assert.equal(message.content[0]?.type, 'tool_use');
        assert.equal(message.content[0]?.name, 'classify');
        assert.ok(validate(message.content[0]?.input), JSON.stringify(validate.errors));
        usages.push(message.usage);
      }
      // One batch: the first request with the prefix writes it, the others read it.
      const writes = usages.map((u) => u.cache_creation_input_tokens);
      const reads = usages.map((u) => u.cache_read_input_tokens);
      assert.equal(writes.filter((w) => (w ?? 0) > 0).length, 1, `writes ${JSON.stringify(writes)}`);
      assert.equal(reads.filter((r) => (r ?? 0) > 0).length, 2, `reads ${JSON.stringify(reads)}`);
      const prefixTokens = Math.max(...writes.map((w) => w ?? 0));
      assert.ok(prefixTokens >= 300, 'the prefix counts at least its words');

      const usage = await h.app.request('GET', '/usage', { key });
      assert.equal(usage.status, 200);
      assert.equal(usage.body.totals.cache_creation_input_tokens, prefixTokens);
      assert.equal(usage.body.totals.cache_read_input_tokens, 2 * prefixTokens);
      assert.equal(usage.body.totals.cost_usd, 0, 'svc-mock is never billed');
    });
  });
}
