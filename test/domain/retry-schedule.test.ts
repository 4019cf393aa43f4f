/** The delivery retry schedule: the default delays, each counted from the previous attempt, and custom ones parsed. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_RETRY_DELAYS_MS, nextAttemptAt, parseRetryDelays } from '../../src/domain/retry-schedule.js';

const T0 = Date.UTC(2026, 10, 22, 12);

describe('nextAttemptAt', () => {
  test('the default schedule: 30 s, 2 min, 10 min, 30 min, 1 h, each from the previous attempt', () => {
    assert.deepEqual([...DEFAULT_RETRY_DELAYS_MS], [30_000, 120_000, 600_000, 1_800_000, 3_600_000]);
    assert.ok(Object.isFrozen(DEFAULT_RETRY_DELAYS_MS));
    let at = T0;
    const starts = [at];
    for (let made = 1; ; made++) {
      const next = nextAttemptAt(made, at, DEFAULT_RETRY_DELAYS_MS);
      if (next === null) break;
      starts.push(next);
      at = next;
    }
    // 1 + 5 retries, the last 1 h 42 min 30 s after the first attempt (interface document 6.1).
    assert.deepEqual(
      starts.map((s) => s - T0),
      [0, 30_000, 150_000, 750_000, 2_550_000, 6_150_000],
    );
    assert.equal(starts.at(-1), T0 + ((1 * 60 + 42) * 60 + 30) * 1000);
  });

  test('counts from the start it is given, not from the first attempt', () => {
    assert.equal(nextAttemptAt(2, T0 + 5_000, DEFAULT_RETRY_DELAYS_MS), T0 + 5_000 + 120_000);
  });

  test('null once the schedule is used up, and for an empty schedule', () => {
    assert.equal(nextAttemptAt(5, T0, DEFAULT_RETRY_DELAYS_MS), T0 + 3_600_000);
    assert.equal(nextAttemptAt(6, T0, DEFAULT_RETRY_DELAYS_MS), null);
    assert.equal(nextAttemptAt(60, T0, DEFAULT_RETRY_DELAYS_MS), null);
    assert.equal(nextAttemptAt(1, T0, []), null);
  });

  test('a custom schedule, zero delays included', () => {
    assert.equal(nextAttemptAt(1, T0, [0, 5]), T0);
    assert.equal(nextAttemptAt(2, T0, [0, 5]), T0 + 5);
    assert.equal(nextAttemptAt(3, T0, [0, 5]), null);
  });
});

describe('parseRetryDelays', () => {
  test('comma-separated milliseconds, spaces allowed', () => {
    assert.deepEqual(parseRetryDelays('30000,120000,600000,1800000,3600000'), [...DEFAULT_RETRY_DELAYS_MS]);
    assert.deepEqual(parseRetryDelays(' 10 , 20,30 '), [10, 20, 30]);
    assert.deepEqual(parseRetryDelays('0'), [0]);
  });

  test('anything else is refused', () => {
    for (const raw of ['', ',', '1,,2', '1,', '-1', '1.5', '1e3', '0x10', 'ten', '1;2', '10 20']) {
      assert.equal(parseRetryDelays(raw), null, `'${raw}'`);
    }
  });
});
