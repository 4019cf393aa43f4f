/** Usage and cost: a message's tokens, their cost at batch and real-time prices, and the UTC days a report covers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MOCK_PRICES } from '../../src/domain/model-catalog.js';
import {
  costOf,
  formatUtcDay,
  MAX_USAGE_DAYS,
  NO_TOKENS,
  parseUtcDay,
  roundUsd,
  type Tokens,
  usageOf,
  usageOfMessage,
  usageRange,
} from '../../src/domain/usage.js';
import { SONNET_PRICES } from '../helpers/prices.js';

/** Sonnet's prices as the shipped catalog gives them (docs/models.md): cache writes 1.25x and 2x, reads 0.1x. */
const SONNET = SONNET_PRICES;
const tokens = (t: Partial<Tokens>): Tokens => ({ ...NO_TOKENS, ...t });

describe('usageOfMessage', () => {
  test("reads the message's input, output and cache counts, with the 5-minute/1-hour split", () => {
    const message = {
      type: 'message',
      usage: {
        input_tokens: 12,
        output_tokens: 30,
        cache_creation_input_tokens: 900,
        cache_read_input_tokens: 5,
        cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 300 },
      },
    };
    assert.deepEqual(usageOfMessage(message), {
      inputTokens: 12,
      outputTokens: 30,
      cacheCreationTokens: 900,
      cacheCreation1hTokens: 300,
      cacheReadTokens: 5,
    });
  });

  test('without the split every write is a 5-minute one; the split alone gives the total', () => {
    assert.deepEqual(usageOfMessage({ usage: { input_tokens: 1, cache_creation_input_tokens: 70 } }), {
      ...tokens({ inputTokens: 1, cacheCreationTokens: 70 }),
    });
    assert.deepEqual(
      usageOfMessage({ usage: { cache_creation: { ephemeral_5m_input_tokens: 4, ephemeral_1h_input_tokens: 6 } } }),
      tokens({ cacheCreationTokens: 10, cacheCreation1hTokens: 6 }),
    );
    // A split larger than the total never makes 5-minute writes negative.
    assert.deepEqual(
      usageOfMessage({ usage: { cache_creation_input_tokens: 5, cache_creation: { ephemeral_1h_input_tokens: 9 } } }),
      tokens({ cacheCreationTokens: 5, cacheCreation1hTokens: 5 }),
    );
  });

  test('counts 0 for what is missing or not a token count', () => {
    assert.deepEqual(usageOfMessage(null), NO_TOKENS);
    assert.deepEqual(usageOfMessage({ type: 'message' }), NO_TOKENS);
    assert.deepEqual(
      usageOfMessage({ usage: { input_tokens: '7', output_tokens: -1, cache_read_input_tokens: 1.5 } }),
      NO_TOKENS,
    );
    assert.deepEqual(usageOfMessage({ usage: { input_tokens: 7 } }), tokens({ inputTokens: 7 }));
  });
});

describe('costOf', () => {
  test('batch prices for the cost, real-time prices for the standard cost, per million tokens', () => {
    assert.deepEqual(costOf(SONNET, tokens({ inputTokens: 1_000_000, outputTokens: 2_000_000 })), {
      costUsd: 1.5 + 15,
      standardCostUsd: 3 + 30,
    });
    assert.deepEqual(costOf(SONNET, tokens({ inputTokens: 200, outputTokens: 40 })), {
      costUsd: (200 * 1.5 + 40 * 7.5) / 1e6,
      standardCostUsd: (200 * 3 + 40 * 15) / 1e6,
    });
  });

  test('every kind of token at its price: input, output, 5-minute and 1-hour writes, reads', () => {
    // 1M of each kind: 900k writes of which 300k are 1-hour ones.
    const used = tokens({
      inputTokens: 1_000_000,
      outputTokens: 1_000_000,
      cacheCreationTokens: 900_000,
      cacheCreation1hTokens: 300_000,
      cacheReadTokens: 1_000_000,
    });
    // Batch: 1.5 + 7.5 + 0.6 × 1.875 + 0.3 × 3 + 0.15 = 11.175; real time: 3 + 15 + 0.6 × 3.75 + 0.3 × 6 + 0.3 = 22.35.
    const { costUsd, standardCostUsd } = costOf(SONNET, used);
    assert.equal(roundUsd(costUsd as number), 11.175);
    assert.equal(roundUsd(standardCostUsd as number), 22.35);
  });

  test('no prices known: null costs; free models: 0', () => {
    assert.deepEqual(costOf(null, tokens({ inputTokens: 10, outputTokens: 10 })), {
      costUsd: null,
      standardCostUsd: null,
    });
    const used = tokens({ inputTokens: 10, outputTokens: 4, cacheReadTokens: 3 });
    assert.deepEqual(usageOf(MOCK_PRICES, used), { ...used, costUsd: 0, standardCostUsd: 0 });
  });

  test('roundUsd removes binary noise and keeps the cost of one cheap token', () => {
    assert.equal(roundUsd(0.1 + 0.2), 0.3);
    assert.equal(roundUsd(0.075 / 1e6), 7.5e-8);
  });
});

describe('UTC days and usage ranges', () => {
  const NOW = Date.UTC(2026, 10, 22, 15, 30);
  const day = (text: string) => parseUtcDay(text) as number;

  test('parses YYYY-MM-DD days and refuses anything else', () => {
    assert.equal(parseUtcDay('1970-01-02'), 1);
    assert.equal(formatUtcDay(day('2026-11-22')), '2026-11-22');
    assert.equal(formatUtcDay(day('2024-02-29')), '2024-02-29');
    for (const bad of ['2026-02-30', '2025-02-29', '2026-13-01', '2026-1-01', '20261122', '2026-11-22T00:00:00Z', '']) {
      assert.equal(parseUtcDay(bad), null, bad);
    }
  });

  test('default: the last 30 days, today (UTC) included', () => {
    assert.deepEqual(usageRange({}, NOW), { fromDay: day('2026-10-24'), toDay: day('2026-11-22') });
    assert.deepEqual(usageRange({ to: '2026-01-30' }, NOW), { fromDay: day('2026-01-01'), toDay: day('2026-01-30') });
    assert.deepEqual(usageRange({ from: '2026-11-01' }, NOW), { fromDay: day('2026-11-01'), toDay: day('2026-11-22') });
    assert.deepEqual(usageRange({ from: '2026-11-22', to: '2026-11-22' }, NOW), {
      fromDay: day('2026-11-22'),
      toDay: day('2026-11-22'),
    });
  });

  test('names the parameter at fault', () => {
    assert.deepEqual(usageRange({ from: 'yesterday' }, NOW), {
      name: 'from',
      value: 'yesterday',
      problem: 'use a UTC day as YYYY-MM-DD',
    });
    assert.equal((usageRange({ from: '2026-11-01', to: '2026-02-30' }, NOW) as { name: string }).name, 'to');
    assert.deepEqual(usageRange({ from: '2026-11-23' }, NOW), {
      name: 'from',
      value: '2026-11-23',
      problem: 'is after to (2026-11-22)',
    });
  });

  test(`at most ${MAX_USAGE_DAYS} days, both ends counted`, () => {
    assert.deepEqual(usageRange({ from: '2024-01-01', to: '2024-12-31' }, NOW), {
      fromDay: day('2024-01-01'),
      toDay: day('2024-12-31'),
    });
    const tooLong = usageRange({ from: '2025-01-01', to: '2026-01-02' }, NOW) as { name: string; problem: string };
    assert.equal(tooLong.name, 'from');
    assert.match(tooLong.problem, /367 days; one report covers at most 366/);
  });
});
