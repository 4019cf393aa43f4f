/**
 * The Anthropic Message Batches adapter (src/providers/anthropic/) driven directly against the
 * Message Batches emulator on loopback: the create body it streams together, the status walk, the
 * mapping of every result type, error kinds, cancel, finding a create whose answer was lost, and a
 * 100,000-line results file read in bounded memory. No database: requests come from generators.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../../src/config.js';
import type { BatchRequest } from '../../src/domain/batch-requests.js';
import { ManualClock } from '../../src/domain/clock.js';
import { CANCELED_ERROR, REQUEST_EXPIRED_ERROR as EXPIRED_ERROR } from '../../src/domain/records.js';
import { AnthropicProvider, type AnthropicProviderOptions } from '../../src/providers/anthropic/anthropic-provider.js';
import { createBodyChunks } from '../../src/providers/anthropic/request-body.js';
import { type JobRef, ProviderError } from '../../src/providers/provider.js';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { EXTRA_FIELD } from '../helpers/emulator-http.js';

const MODEL = 'claude-sonnet-4-5-20250929';
const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

let emulator: AnthropicEmulator;
before(async () => {
  emulator = await startAnthropicEmulator();
});
after(() => emulator.close());

/** The adapter as `barge serve` builds it: its settings from the config, defaults included. */
function adapter(options: Partial<AnthropicProviderOptions> = {}, on: AnthropicEmulator = emulator) {
  const settings = loadConfig({ ANTHROPIC_API_KEY: on.apiKey, ANTHROPIC_BASE_URL: on.url }).providers.anthropic;
  assert.ok(settings);
  return new AnthropicProvider({ ...settings, clock: new ManualClock(Date.now()), ...options });
}

const input = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ max_tokens: 64, messages: [{ role: 'user', content: text }], ...extra });

/** Requests as the store hands them over: one at a time, from an async generator. */
function requestsOf(prefix: string, count: number, make: (i: number) => string = (i) => input(`question ${i}`)) {
  return async function* (): AsyncGenerator<BatchRequest> {
    for (let i = 0; i < count; i++) yield { customId: `${prefix}_${i}`, input: make(i) };
  };
}

function jobOf(jobId: string, requestCount: number, submittedAt: number, model = MODEL): JobRef {
  return {
    batchId: 'bat_test',
    jobId,
    model,
    requestCount,
    submittedAt,
    canceledAt: null,
    state: null,
    requests: () => requestsOf('unused', 0)(),
    customIds: async function* () {},
  };
}

async function submit(provider: AnthropicProvider, prefix: string, count: number, make?: (i: number) => string) {
  const step = await provider.submit({
    batchId: 'bat_test',
    model: MODEL,
    requestCount: count,
    requests: requestsOf(prefix, count, make)(),
    state: null,
  });
  assert.equal(step.kind, 'submitted');
  return step.jobId;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

async function rejectsWith(promise: Promise<unknown>, kind: ProviderError['kind'], message?: RegExp) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ProviderError, `a ProviderError, not ${String(err)}`);
    assert.equal(err.kind, kind, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test('submit sends one create whose body is the stored inputs with the model added, under the pinned version', async () => {
  const provider = adapter();
  const logged = emulator.log.length;
  const extra = (i: number) => (i === 2 ? '{}' : input(`question ${i}`, { system: 'Be brief.', temperature: 0.5 }));
  const jobId = await submit(provider, 'crt', 3, extra);
  const [call, ...others] = emulator.log.slice(logged);
  assert.equal(others.length, 0);
  assert.ok(call);
  assert.equal(call.method, 'POST');
  assert.equal(call.path, '/v1/messages/batches');
  assert.equal(call.headers['anthropic-version'], '2023-06-01');
  assert.equal(call.headers.authorization, `Bearer ${emulator.apiKey}`);
  assert.equal(call.headers['content-type'], 'application/json');
  assert.equal(call.headers['transfer-encoding'], 'chunked', 'the body is streamed as it is produced');
  assert.equal(call.headers['x-stainless-retry-count'], '0');
  assert.deepEqual(call.body, {
    requests: [0, 1, 2].map((i) => ({
      custom_id: `crt_${i}`,
      params: { model: MODEL, ...JSON.parse(extra(i)) },
    })),
  });
  assert.equal(Object.keys((call.body as { requests: { params: object }[] }).requests[0]?.params ?? {})[0], 'model');
  assert.equal(emulator.batch(jobId)?.requests.length, 3);

  // Another version when the operator sets one.
  await submit(adapter({ version: '2026-10-21' }), 'ver', 1);
  assert.equal(emulator.log.at(-1)?.headers['anthropic-version'], '2026-10-21');
});

test('a batch walks running → ended, and every result type maps as decisions.md says, messages untouched', async () => {
  const provider = adapter();
  const jobId = await submit(provider, 'mix', 12);
  emulator.setOutcome('mix_1', { type: 'errored', error: { type: 'overloaded_error', message: 'Overloaded' } });
  emulator.setOutcome('mix_2', { type: 'expired' });
  emulator.setOutcome('mix_3', { type: 'canceled' });
  const job = jobOf(jobId, 12, Date.now());
  assert.deepEqual(await provider.status(job), { state: 'running', expectedEndAt: null });
  emulator.end(jobId);
  assert.deepEqual(await provider.status(job), { state: 'ended' });

  const results = await collect(provider.results(job));
  assert.equal(results.length, 12);
  assert.notDeepEqual(
    results.map((r) => r.customId),
    Array.from({ length: 12 }, (_, i) => `mix_${i}`),
    'results come back in another order',
  );
  const byId = new Map(results.map((r) => [r.customId, r]));
  assert.deepEqual(byId.get('mix_1'), {
    customId: 'mix_1',
    success: false,
    kind: 'errored',
    error: 'overloaded_error: Overloaded',
  });
  assert.deepEqual(byId.get('mix_2'), { customId: 'mix_2', success: false, kind: 'expired', error: EXPIRED_ERROR });
  assert.deepEqual(byId.get('mix_3'), { customId: 'mix_3', success: false, kind: 'canceled', error: CANCELED_ERROR });

  const sent = new Map(emulator.batch(jobId)?.results?.map((l) => [l.custom_id, l.result]));
  for (const i of [0, 4, 11]) {
    const result = byId.get(`mix_${i}`);
    assert.ok(result?.success);
    const message = (sent.get(`mix_${i}`) as { message: unknown }).message;
    assert.deepEqual(result.response, message, 'the Message exactly as the provider returned it');
    assert.deepEqual((result.response as unknown as typeof EXTRA_FIELD).future_field, EXTRA_FIELD.future_field);
  }
});

test('a request the provider validates late (no max_tokens) is errored with its type and message', async () => {
  const provider = adapter();
  const jobId = await submit(provider, 'late', 1, () => JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }));
  emulator.end(jobId);
  const [result] = await collect(provider.results(jobOf(jobId, 1, Date.now())));
  assert.deepEqual(result, {
    customId: 'late_0',
    success: false,
    kind: 'errored',
    error: 'invalid_request_error: max_tokens: Input should be an integer greater than or equal to 1',
  });
});

test('HTTP failures become ProviderErrors of the right kind, with the provider text and retry-after', async () => {
  const provider = adapter();
  emulator.faults.failNext(1, { status: 429, retryAfterSeconds: 7, method: 'POST' });
  await rejectsWith(submit(provider, 'rl', 1), 'rate_limited', /^rate_limit_error: injected failure$/);
  emulator.faults.failNext(1, { status: 429, retryAfterSeconds: 7, method: 'POST' });
  await assert.rejects(submit(provider, 'rl', 1), (err: unknown) => (err as ProviderError).retryAfterMs === 7000);

  const jobId = await submit(provider, 'flaky', 1);
  const job = jobOf(jobId, 1, Date.now());
  emulator.faults.failNext(1, { status: 529, retryAfterSeconds: null, method: 'GET' });
  await rejectsWith(provider.status(job), 'retryable', /^overloaded_error: /);
  emulator.faults.failNext(1, { status: 500, method: 'GET' });
  await rejectsWith(provider.status(job), 'retryable', /^api_error: /);
  emulator.faults.failNext(1, { status: 500, method: 'GET', path: /\/results$/ });
  emulator.end(jobId);
  await rejectsWith(collect(provider.results(job)), 'retryable');
  assert.equal((await collect(provider.results(job))).length, 1);

  const wrongKey = adapter({ apiKey: 'sk-ant-not-the-key' });
  await assert.rejects(wrongKey.status(job), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.kind, 'auth');
    assert.equal(err.message, 'authentication_error: invalid x-api-key');
    assert.ok(!err.message.includes('sk-ant-not-the-key'));
    return true;
  });

  // The whole create is refused at once for a custom_id the API will not take.
  const refused = provider.submit({
    batchId: 'bat_test',
    model: MODEL,
    requestCount: 1,
    requests: (async function* () {
      yield { customId: 'x'.repeat(65), input: input('hi') };
    })(),
    state: null,
  });
  await rejectsWith(
    refused,
    'rejected',
    /^invalid_request_error: requests\.0\.custom_id: String should have at most 64/,
  );

  const nowhere = adapter({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', clock: new ManualClock() });
  await rejectsWith(nowhere.status(job), 'retryable', /^connection_error: /);
});

test('a 404 just after create is retryable; long after, the batch is gone (rejected)', async () => {
  const clock = new ManualClock(Date.now());
  const provider = adapter({ clock });
  emulator.faults.notFoundAfterCreate(2);
  const jobId = await submit(provider, 'ghost', 1);
  emulator.faults.notFoundAfterCreate(0);
  const job = jobOf(jobId, 1, clock.now());
  clock.advance(1000);
  await rejectsWith(provider.status(job), 'retryable', /^not_found_error: /);
  await rejectsWith(collect(provider.results(job)), 'retryable', /^not_found_error: /);
  emulator.faults.failNext(1, { status: 404, path: /\/cancel$/ });
  await rejectsWith(provider.cancel(job), 'retryable', /^not_found_error: /);
  assert.deepEqual(await provider.status(job), { state: 'running', expectedEndAt: null });

  clock.advance(10 * 60_000);
  await rejectsWith(provider.status(jobOf('msgbatch_unknown', 1, job.submittedAt)), 'rejected', /^not_found_error: /);
});

test('a batch past expires_at ends by itself; its unprocessed requests are expired', async () => {
  let now = T0;
  const timed = await startAnthropicEmulator({ clock: () => now });
  try {
    const provider = adapter({ clock: new ManualClock(T0) }, timed);
    const jobId = await submit(provider, 'exp', 2);
    timed.setOutcome('exp_0', { type: 'succeeded' });
    now += 24 * 3600_000;
    const job = jobOf(jobId, 2, T0);
    assert.deepEqual(await provider.status(job), { state: 'ended' });
    const byId = new Map((await collect(provider.results(job))).map((r) => [r.customId, r]));
    assert.equal(byId.get('exp_0')?.success, true);
    assert.deepEqual(byId.get('exp_1'), { customId: 'exp_1', success: false, kind: 'expired', error: EXPIRED_ERROR });
  } finally {
    await timed.close();
  }
});

test('cancel asks the API once; a refusal because the batch already ended is no error', async () => {
  const provider = adapter();
  const jobId = await submit(provider, 'stop', 3);
  emulator.setOutcome('stop_0', { type: 'succeeded' });
  const job = jobOf(jobId, 3, Date.now());
  await provider.cancel(job);
  const call = emulator.log.at(-1);
  assert.equal(call?.path, `/v1/messages/batches/${jobId}/cancel`);
  assert.equal(call?.method, 'POST');
  assert.equal(emulator.batch(jobId)?.status, 'canceling');
  assert.deepEqual(await provider.status(job), { state: 'running', expectedEndAt: null });
  emulator.end(jobId);
  assert.deepEqual(await provider.status(job), { state: 'ended' });
  const kinds = Object.fromEntries(
    (await collect(provider.results(job))).map((r) => [r.customId, r.success || r.kind]),
  );
  assert.deepEqual(kinds, { stop_0: true, stop_1: 'canceled', stop_2: 'canceled' });

  await provider.cancel(job); // ended: the API answers with the batch
  emulator.faults.failNext(1, { status: 400, path: /\/cancel$/ });
  await provider.cancel(job); // ended: a 400 is what was wanted
  const running = jobOf(await submit(provider, 'stop2', 1), 1, Date.now());
  emulator.faults.failNext(1, { status: 400, path: /\/cancel$/ });
  await rejectsWith(provider.cancel(running), 'rejected', /^invalid_request_error: injected failure$/);
  await provider.cleanup(running);
  assert.equal(emulator.log.at(-1)?.method, 'GET', 'cleanup deletes nothing');
});

test('findSubmitted finds a batch whose create answer was lost, by request count and creation window', async () => {
  let now = T0;
  const timed = await startAnthropicEmulator({ clock: () => now });
  try {
    const clock = new ManualClock(T0);
    const provider = adapter({ clock, listPageSize: 2 }, timed);
    await submit(provider, 'old', 4); // same size, but 10 minutes before the submission started
    now += 10 * 60_000;
    const startedAt = now;
    await submit(provider, 'small', 3); // in the window, another size
    now += 1000;
    const held = timed.holdNextCreate();
    const lost = submit(provider, 'lost', 4);
    await held.arrived;
    now += 1000;
    await submit(provider, 'twin', 4); // same size and in the window: also a candidate
    now += 2 * 60_000;
    await submit(provider, 'later', 4); // after the lease lapsed (+ skew)
    now += 1000;

    const listed = timed.log.length;
    const found = await provider.findSubmitted({
      batchId: 'bat_test',
      requestCount: 4,
      startedAt,
      until: startedAt + 30_000,
      state: null,
    });
    const idOf = (prefix: string) => timed.batches().find((b) => b.requests[0]?.custom_id === `${prefix}_0`)?.id;
    assert.deepEqual(found, [
      { jobId: idOf('twin'), state: null, match: 'candidate' },
      { jobId: idOf('lost'), state: null, match: 'candidate' },
    ]);
    const lists = timed.log.slice(listed);
    assert.ok(lists.every((r) => r.method === 'GET' && r.path === '/v1/messages/batches'));
    // 5 batches newest first, 2 per page: the third page holds the old one and paging stops there.
    assert.deepEqual(
      lists.map((r) => r.query.limit),
      ['2', '2', '2'],
    );

    held.release();
    assert.equal(await lost, idOf('lost'));
  } finally {
    await timed.close();
  }
});

test('limits: the documented sizes, and a batch above them is refused before any call', async () => {
  const provider = adapter();
  assert.equal(provider.name, 'anthropic');
  assert.equal(provider.limits.maxRequests, 100_000);
  assert.ok(provider.limits.maxBytes < 256 * 1024 * 1024 && provider.limits.maxBytes > 230 * 1024 * 1024);
  assert.equal(provider.limits.minRequests, 1);
  assert.equal(provider.limits.completionWindowMs, 24 * 3600_000);
  assert.equal(provider.limits.defaultMaxWaitMs, 60_000);

  const created = emulator.batches().length;
  await rejectsWith(submit(adapter({ limits: { maxRequests: 2 } }), 'many', 3), 'rejected', /more than 2 requests/);
  assert.equal(emulator.batches().length, created, 'the upload broke off: no batch');
  const body = (count: number, make: (i: number) => string, limits: { maxRequests: number; maxBodyBytes: number }) =>
    collect(createBodyChunks(MODEL, requestsOf('b', count, make)(), limits));
  await rejectsWith(
    body(3, () => input('x'.repeat(600)), { maxRequests: 10, maxBodyBytes: 1500 }),
    'rejected',
    /exceeds 1500 bytes/,
  );
  await assert.rejects(body(1, () => '[1]', { maxRequests: 1, maxBodyBytes: 1e6 }));
  const text = Buffer.concat(await body(2, (i) => input(`q${i}`), { maxRequests: 2, maxBodyBytes: 1e6 })).toString();
  assert.equal((JSON.parse(text) as { requests: unknown[] }).requests.length, 2);
});

test('100,000 requests go in one create, and their results file is read as a stream in bounded memory', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const provider = adapter();
  const count = 100_000;
  const jobId = await submit(provider, 'big', count, (i) => input(`q${i}`));
  emulator.end(jobId);
  const job = jobOf(jobId, count, Date.now());
  const fileBytes = (emulator.batch(jobId)?.results ?? []).reduce((n, l) => n + JSON.stringify(l).length + 1, 0);
  assert.ok(fileBytes > 50 * 1024 * 1024, `a results file of ${fileBytes} bytes`);

  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = 0;
  const seen = new Set<string>();
  let succeeded = 0;
  for await (const result of provider.results(job)) {
    seen.add(result.customId);
    if (result.success) succeeded++;
    if (seen.size % 20_000 === 0) {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
    }
  }
  assert.equal(seen.size, count);
  assert.equal(succeeded, count);
  // The ids kept by this test are ~8 MB of the growth; a buffered file would add its whole size.
  assert.ok(peak < fileBytes / 4, `heap grew ${peak} bytes while reading a ${fileBytes}-byte file`);
});
