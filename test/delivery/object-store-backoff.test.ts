/** The storage throttling backoff: capped exponential delays with full jitter, within its retries and its deadline. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isThrottledResult, withThrottleBackoff } from '../../src/delivery/aws/throttle-backoff.js';

describe('throttling backoff', () => {
  const run = async (answers: string[], overrides: { retries?: number; deadline?: number; random?: number } = {}) => {
    const sleeps: number[] = [];
    let now = 0;
    let calls = 0;
    const result = await withThrottleBackoff(
      async () => answers[calls++] ?? 'ok',
      (value) => (value === 'SlowDown' ? 'SlowDown (HTTP 503)' : null),
      {
        baseDelayMs: 100,
        maxDelayMs: 1000,
        retries: overrides.retries ?? 8,
        deadline: overrides.deadline ?? Number.POSITIVE_INFINITY,
        sleep: async (ms) => {
          sleeps.push(ms);
          now += ms;
        },
        random: () => overrides.random ?? 1,
        now: () => now,
      },
    );
    return { result, sleeps, calls };
  };

  test('throttling is retried with capped exponential delays until an answer that is not throttling', async () => {
    const { result, sleeps, calls } = await run(['SlowDown', 'SlowDown', 'ok']);
    assert.equal(result, 'ok');
    assert.equal(calls, 3);
    assert.deepEqual(sleeps, [100, 200]);
    const long = await run(Array(6).fill('SlowDown'));
    assert.deepEqual(long.sleeps, [100, 200, 400, 800, 1000, 1000], 'capped at maxDelayMs');
  });

  test('full jitter: each delay is a random share of its cap', async () => {
    const { sleeps } = await run(['SlowDown', 'SlowDown'], { random: 0.25 });
    assert.deepEqual(sleeps, [25, 50]);
  });

  test('other answers pass straight through, failures included', async () => {
    const { result, calls, sleeps } = await run(['AccessDenied']);
    assert.equal(result, 'AccessDenied');
    assert.equal(calls, 1);
    assert.deepEqual(sleeps, []);
  });

  test('gives up after the retries, or rather than sleep past the deadline', async () => {
    const tooMany = await run(Array(10).fill('SlowDown'), { retries: 2 });
    assert.ok(isThrottledResult(tooMany.result));
    assert.deepEqual(tooMany.result, { throttled: true, tries: 3, detail: 'SlowDown (HTTP 503)' });
    const late = await run(Array(10).fill('SlowDown'), { deadline: 250 });
    assert.deepEqual(late.sleeps, [100], 'a second sleep of 200 ms would pass the deadline');
    assert.ok(isThrottledResult(late.result));
  });
});
