/**
 * The call deadline (src/providers/call-deadline.ts), on real timers: a call with no progress for
 * the deadline is aborted and fails as retryable; an upload or a download that keeps moving is not
 * cut off however long it takes, and the time a consumer spends on a result is not the provider's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BatchRequest } from '../../src/domain/batch-requests.js';
import { withCallDeadline } from '../../src/providers/call-deadline.js';
import {
  type JobRef,
  type Provider,
  ProviderError,
  type RequestResult,
  type SubmitInput,
} from '../../src/providers/provider.js';
import { sleep } from '../helpers/wait.js';

const DEADLINE_MS = 200;

const job = { batchId: 'bat_1', jobId: 'job_1' } as JobRef;
const result = (n: number): RequestResult => ({ customId: `r${n}`, success: false, kind: 'errored', error: 'x' });

/** A provider whose calls do what each test says; `signals` are those the deadline handed in. */
function provider(calls: Partial<Provider>): Provider & { signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const never = (signal?: AbortSignal) => {
    if (signal) signals.push(signal);
    return new Promise<never>(() => {});
  };
  return {
    name: 'slow',
    limits: { maxRequests: 10, maxBytes: 1000, minRequests: 1, completionWindowMs: 1000, defaultMaxWaitMs: 0 },
    submit: () => never(),
    findSubmitted: (_lookup, signal) => never(signal),
    status: (_job, signal) => never(signal),
    cancel: (_job, signal) => never(signal),
    cleanup: (_job, signal) => never(signal),
    check: async () => [],
    results: async function* () {},
    ...calls,
    signals,
  };
}

async function* requests(n: number): AsyncGenerator<BatchRequest> {
  for (let i = 0; i < n; i++) yield { customId: `r${i}` } as BatchRequest;
}

const submitInput = (n: number): SubmitInput => ({
  batchId: 'bat_1',
  model: 'm',
  requestCount: n,
  requests: requests(n),
  state: null,
});

describe('the provider call deadline', () => {
  test('a call with no answer fails as retryable at its deadline, and its signal is aborted', async () => {
    const slow = provider({});
    const started = performance.now();
    await assert.rejects(withCallDeadline(slow, DEADLINE_MS).status(job), (err: unknown) => {
      assert.ok(err instanceof ProviderError);
      assert.equal(err.kind, 'retryable');
      assert.match(err.message, /slow status: no progress within 200 ms/);
      return true;
    });
    const took = performance.now() - started;
    assert.ok(took >= DEADLINE_MS - 5 && took < DEADLINE_MS + 1000, `failed after ${took} ms`);
    assert.equal(slow.signals[0]?.aborted, true, 'the call was aborted');
  });

  test('an upload that keeps reading requests is not cut off, though it takes far longer than the deadline', async () => {
    const uploading = provider({
      submit: async (input) => {
        let read = 0;
        for await (const _ of input.requests) {
          read++;
          await sleep(DEADLINE_MS / 4);
        }
        assert.equal(input.signal?.aborted, false);
        return { kind: 'submitted', jobId: `job_${read}`, state: null };
      },
    });
    const started = performance.now();
    const step = await withCallDeadline(uploading, DEADLINE_MS).submit(submitInput(12));
    assert.deepEqual(step, { kind: 'submitted', jobId: 'job_12', state: null });
    assert.ok(performance.now() - started > 2 * DEADLINE_MS, 'the upload outlasted the deadline');
  });

  test('an upload that stops reading is cut off at the deadline', async () => {
    const stalled = provider({
      submit: async (input) => {
        for await (const _ of input.requests) await new Promise(() => {});
        return { kind: 'submitted', jobId: 'never', state: null };
      },
    });
    await assert.rejects(withCallDeadline(stalled, DEADLINE_MS).submit(submitInput(3)), /no progress within 200 ms/);
  });

  test('a download is bounded between results, not in total, and not while the consumer holds a result', async () => {
    const trickle = provider({
      results: async function* () {
        for (let i = 0; i < 8; i++) {
          await sleep(DEADLINE_MS / 4);
          yield result(i);
        }
      },
    });
    const seen: string[] = [];
    for await (const r of withCallDeadline(trickle, DEADLINE_MS).results(job)) {
      seen.push(r.customId);
      // Storing a result may take longer than the deadline: that is barge's time, not the provider's.
      if (seen.length === 2) await sleep(DEADLINE_MS * 2);
    }
    assert.equal(seen.length, 8);
  });

  test('a download that stalls mid-way fails as retryable and its signal is aborted', async () => {
    let signal: AbortSignal | undefined;
    const stalls = provider({
      results: async function* (_job, s) {
        signal = s;
        yield result(0);
        await new Promise(() => {});
      },
    });
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const r of withCallDeadline(stalls, DEADLINE_MS).results(job)) seen.push(r.customId);
      })(),
      (err: unknown) => err instanceof ProviderError && err.kind === 'retryable',
    );
    assert.deepEqual(seen, ['r0']);
    assert.equal(signal?.aborted, true);
  });
});
