/** Usage and cost: a message's tokens, their cost at batch and real-time prices, and the UTC days a report covers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  costOf,
  formatUtcDay,
  MAX_USAGE_DAYS,
  parseUtcDay,
  roundUsd,
  usageOf,
  usageOfMessage,
  usageRange,
} from '../../src/domain/usage.js';

const SONNET = { input: 3, output: 15, batch_input: 1.5, batch_output: 7.5 };

describe('usageOfMessage', () => {
  test("reads the message's usage.input_tokens and usage.output_tokens", () => {
    const message = {
      type: 'message',
      usage: { input_tokens: 12, output_tokens: 30, cache_read_input_tokens: 5 },
    };
    assert.deepEqual(usageOfMessage(message), { inputTokens: 12, outputTokens: 30 });
  });

  test('counts 0 for what is missing or not a token count', () => {
    assert.deepEqual(usageOfMessage(null), { inputTokens: 0, outputTokens: 0 });
    assert.deepEqual(usageOfMessage({ type: 'message' }), { inputTokens: 0, outputTokens: 0 });
    assert.deepEqual(usageOfMessage({ usage: { input_tokens: '7', output_tokens: -1 } }), {
      inputTokens: 0,
      outputTokens: 0,
    });
    assert.deepEqual(usageOfMessage({ usage: { input_tokens: 7 } }), { inputTokens: 7, outputTokens: 0 });
  });
});

describe('costOf', () => {
  test('batch prices for the cost, real-time prices for the standard cost, per million tokens', () => {
    assert.deepEqual(costOf(SONNET, { inputTokens: 1_000_000, outputTokens: 2_000_000 }), {
      costUsd: 1.5 + 15,
      standardCostUsd: 3 + 30,
    });
    assert.deepEqual(costOf(SONNET, { inputTokens: 200, outputTokens: 40 }), {
      costUsd: (200 * 1.5 + 40 * 7.5) / 1e6,
      standardCostUsd: (200 * 3 + 40 * 15) / 1e6,
    });
  });

  test('no prices known: null costs; free models: 0', () => {
    assert.deepEqual(costOf(null, { inputTokens: 10, outputTokens: 10 }), { costUsd: null, standardCostUsd: null });
    const free = { input: 0, output: 0, batch_input: 0, batch_output: 0 };
    assert.deepEqual(usageOf(free, { inputTokens: 10, outputTokens: 4 }), {
      inputTokens: 10,
      outputTokens: 4,
      costUsd: 0,
      standardCostUsd: 0,
    });
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
