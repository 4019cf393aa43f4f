/**
 * Checks the Anthropic Message Batches emulator (test/helpers/anthropic-emulator.ts) with the
 * official `@anthropic-ai/sdk`: every operation and status, results streaming, pagination, errors
 * and retries. If the SDK parses what the emulator says, adapter tests against it are meaningful.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { EXTRA_FIELD } from '../helpers/emulator-http.js';
import { eventually } from '../helpers/wait.js';

// barge pins this version (decisions.md); the SDK's own default is 2026-10-21.
const VERSION = '2023-06-01';
const BATCH_FIELDS = [
  'archived_at',
  'cancel_initiated_at',
  'created_at',
  'ended_at',
  'expires_at',
  'future_field',
  'id',
  'processing_status',
  'request_counts',
  'results_url',
  'type',
];

let emulator: AnthropicEmulator;
before(async () => {
  emulator = await startAnthropicEmulator();
});
after(() => emulator.close());

const client = (options: ConstructorParameters<typeof Anthropic>[0] = {}) =>
  new Anthropic({
    apiKey: emulator.apiKey,
    baseURL: emulator.url,
    maxRetries: 0,
    defaultHeaders: { 'anthropic-version': VERSION },
    ...options,
  });

const params = (text: string, extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-5-20250929',
  max_tokens: 1024,
  messages: [{ role: 'user' as const, content: text }],
  ...extra,
});

const requests = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ custom_id: `${prefix}-${i}`, params: params(`question ${i}`) }));

async function results(sdk: Anthropic, id: string) {
  const lines: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
  for await (const line of await sdk.messages.batches.results(id)) lines.push(line);
  return lines;
}

const lastRequest = () => {
  const entry = emulator.log.at(-1);
  assert.ok(entry);
  return entry;
};

test('create returns an in_progress batch with every documented field, and records what arrived', async () => {
  const sdk = client();
  const sent = requests('create', 3);
  const batch = await sdk.messages.batches.create({ requests: sent });
  assert.deepEqual(Object.keys(batch).sort(), BATCH_FIELDS);
  assert.match(batch.id, /^msgbatch_01[A-Za-z0-9]{22}$/);
  assert.equal(batch.type, 'message_batch');
  assert.equal(batch.processing_status, 'in_progress');
  assert.deepEqual(batch.request_counts, { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
  assert.equal(batch.results_url, null);
  assert.equal(batch.ended_at, null);
  assert.equal(Date.parse(batch.expires_at) - Date.parse(batch.created_at), 24 * 3600 * 1000);
  assert.deepEqual((batch as unknown as typeof EXTRA_FIELD).future_field, EXTRA_FIELD.future_field);

  const arrived = lastRequest();
  assert.equal(arrived.method, 'POST');
  assert.equal(arrived.path, '/v1/messages/batches');
  assert.equal(arrived.headers['anthropic-version'], VERSION);
  assert.equal(arrived.headers.authorization, `Bearer ${emulator.apiKey}`); // SDK 1.x sends the key as a bearer token
  assert.deepEqual(arrived.body, { requests: sent });
  assert.equal(arrived.status, 200);
});

test('the key goes as x-api-key or Bearer (x-api-key wins); a wrong key is 401, a missing version 400', async () => {
  const raw = (headers: Record<string, string>) =>
    fetch(`${emulator.url}/v1/messages/batches`, { headers: { 'anthropic-version': VERSION, ...headers } });
  assert.equal((await raw({ 'x-api-key': emulator.apiKey })).status, 200);
  assert.equal((await raw({ 'x-api-key': emulator.apiKey, authorization: 'Bearer wrong' })).status, 200);
  const missing = await raw({});
  assert.equal(missing.status, 401);
  assert.ok(missing.headers.get('request-id')?.startsWith('req_'));

  await assert.rejects(client({ apiKey: 'sk-ant-wrong' }).messages.batches.list(), (err: unknown) => {
    assert.ok(err instanceof Anthropic.AuthenticationError);
    assert.equal(err.type, 'authentication_error');
    assert.equal(err.apiMessage, 'invalid x-api-key');
    return true;
  });
  const noVersion = await fetch(`${emulator.url}/v1/messages/batches`, { headers: { 'x-api-key': emulator.apiKey } });
  assert.equal(noVersion.status, 400);
  const unknown = client({ defaultHeaders: { 'anthropic-version': '2099-01-01' } });
  await assert.rejects(unknown.messages.batches.list(), Anthropic.BadRequestError);
});

test('create refuses bad bodies and custom_ids with a synchronous 400 naming the problem', async () => {
  const sdk = client();
  const refused = async (body: unknown, message: string) => {
    await assert.rejects(
      sdk.messages.batches.create(body as Anthropic.Messages.BatchCreateParams),
      (err: unknown) => err instanceof Anthropic.BadRequestError && err.apiMessage === message,
    );
  };
  await refused({ requests: [] }, 'requests: List should have at least 1 item after validation, not 0');
  await refused(
    { requests: [{ custom_id: 'x'.repeat(65), params: params('hi') }] },
    'requests.0.custom_id: String should have at most 64 characters',
  );
  await refused(
    { requests: [{ custom_id: 'crg.1', params: params('hi') }] },
    "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
  );
  await refused(
    { requests: [{ custom_id: '', params: params('hi') }] },
    "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
  );
  await refused(
    { requests: [...requests('dup', 2), { custom_id: 'dup-0', params: params('again') }] },
    'requests.2.custom_id: Duplicate custom_id "dup-0" in the batch',
  );
  await refused(
    { requests: [{ custom_id: 'a', params: 'hi' }] },
    'requests.0.params: Input should be a valid dictionary',
  );
  await refused(
    { requests: [{ custom_id: 'a', params: params('hi'), extra: 1 }] },
    'requests.0.extra: Extra inputs are not permitted',
  );
  await refused({ requests: requests('meta', 1), metadata: {} }, 'metadata: Extra inputs are not permitted');
  assert.equal(emulator.log.at(-1)?.status, 400);
  // A custom_id of exactly 64 allowed characters is fine.
  await sdk.messages.batches.create({ requests: [{ custom_id: `${'a'.repeat(62)}_-`, params: params('hi') }] });
});

test('the request count and byte limits answer 400 and 413', async () => {
  const small = await startAnthropicEmulator({ maxRequests: 3, maxBodyBytes: 4096 });
  try {
    const sdk = new Anthropic({
      apiKey: small.apiKey,
      baseURL: small.url,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-version': VERSION },
    });
    await assert.rejects(sdk.messages.batches.create({ requests: requests('many', 4) }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.BadRequestError);
      assert.match(err.apiMessage ?? '', /at most 3 items/);
      return true;
    });
    const big = [{ custom_id: 'big', params: params('x'.repeat(5000)) }];
    await assert.rejects(sdk.messages.batches.create({ requests: big }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.APIError);
      assert.equal(err.status, 413);
      assert.equal(err.type, 'request_too_large');
      return true;
    });
    assert.equal((await sdk.messages.batches.create({ requests: requests('ok', 3) })).processing_status, 'in_progress');
  } finally {
    await small.close();
  }
});

test('a batch ends with results of every type, shuffled, streamed at results_url, parsed without loss', async () => {
  const sdk = client();
  const sent = requests('mixed', 12);
  sent.push({ custom_id: 'mixed-bad', params: { model: 'claude-sonnet-4-5-20250929', messages: [] } as never });
  sent.push({ custom_id: 'mixed-short', params: params('cut me', { max_tokens: 3 }) });
  const batch = await sdk.messages.batches.create({ requests: sent });
  emulator.setOutcome('mixed-1', { type: 'errored', error: { type: 'overloaded_error', message: 'Overloaded' } });
  emulator.setOutcome('mixed-2', { type: 'expired' });
  emulator.setOutcome('mixed-3', { type: 'canceled' });
  emulator.setOutcome('mixed-4', { type: 'succeeded', message: { usage: { input_tokens: 10, output_tokens: 20 } } });

  await assert.rejects(
    sdk.messages.batches.results(batch.id),
    /No batch `results_url`; Has it finished processing\? in_progress/,
  );
  emulator.end(batch.id);
  const ended = await sdk.messages.batches.retrieve(batch.id);
  assert.equal(ended.processing_status, 'ended');
  assert.ok(ended.ended_at && Date.parse(ended.ended_at) >= Date.parse(ended.created_at));
  assert.equal(ended.results_url, `${emulator.url}/v1/messages/batches/${batch.id}/results`);
  assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 10, errored: 2, canceled: 1, expired: 1 });

  const lines = await results(sdk, batch.id);
  const fetched = emulator.log.at(-1);
  assert.equal(fetched?.path, `/v1/messages/batches/${batch.id}/results`);
  assert.equal(fetched?.headers.accept, 'application/binary');
  assert.notDeepEqual(
    lines.map((l) => l.custom_id),
    sent.map((r) => r.custom_id),
    'results come back in another order',
  );
  const byId = new Map(lines.map((l) => [l.custom_id, l.result]));
  assert.equal(byId.size, sent.length);

  const ok = byId.get('mixed-0');
  assert.ok(ok?.type === 'succeeded');
  assert.equal(ok.message.type, 'message');
  assert.equal(ok.message.role, 'assistant');
  assert.equal(ok.message.model, 'claude-sonnet-4-5-20250929');
  assert.equal(ok.message.stop_reason, 'end_turn');
  assert.equal(ok.message.usage.service_tier, 'batch');
  assert.ok(ok.message.usage.input_tokens > 0 && ok.message.usage.output_tokens > 0);
  assert.deepEqual((ok.message as unknown as typeof EXTRA_FIELD).future_field, EXTRA_FIELD.future_field);
  const short = byId.get('mixed-short');
  assert.ok(short?.type === 'succeeded');
  assert.equal(short.message.stop_reason, 'max_tokens');
  assert.equal(short.message.usage.output_tokens, 3);
  const fixed = byId.get('mixed-4');
  assert.ok(fixed?.type === 'succeeded');
  assert.deepEqual(fixed.message.usage, { input_tokens: 10, output_tokens: 20 });
  assert.deepEqual(byId.get('mixed-1'), {
    type: 'errored',
    error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: null },
  });
  const bad = byId.get('mixed-bad');
  assert.ok(bad?.type === 'errored');
  assert.deepEqual(bad.error.error, {
    type: 'invalid_request_error',
    message: 'max_tokens: Input should be an integer greater than or equal to 1',
  });
  assert.deepEqual(byId.get('mixed-2'), { type: 'expired' });
  assert.deepEqual(byId.get('mixed-3'), { type: 'canceled' });

  // The SDK's JSONL decoder keeps every field: the raw body parses to the same lines.
  const raw = await fetch(ended.results_url ?? '', {
    headers: { 'x-api-key': emulator.apiKey, 'anthropic-version': VERSION },
  });
  assert.equal(raw.headers.get('content-type'), 'application/x-jsonl');
  const text = await raw.text();
  assert.ok(text.endsWith('}\n') && !text.includes('\n\n'));
  const rawLines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { custom_id: string; result: unknown });
  assert.deepEqual(new Map(rawLines.map((l) => [l.custom_id, l.result])), byId);
});

test('cancel walks in_progress → canceling → ended; processed requests keep their results', async () => {
  const sdk = client();
  const batch = await sdk.messages.batches.create({ requests: requests('cancel', 4) });
  emulator.setOutcome('cancel-0', { type: 'succeeded' });
  const canceling = await sdk.messages.batches.cancel(batch.id);
  assert.equal(canceling.processing_status, 'canceling');
  assert.ok(canceling.cancel_initiated_at);
  assert.equal(canceling.results_url, null);
  assert.equal(lastRequest().body, undefined);
  assert.equal((await sdk.messages.batches.retrieve(batch.id)).processing_status, 'canceling');
  emulator.endAll();
  const ended = await sdk.messages.batches.retrieve(batch.id);
  assert.equal(ended.processing_status, 'ended');
  assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 1, errored: 0, canceled: 3, expired: 0 });
  const types = new Map((await results(sdk, batch.id)).map((l) => [l.custom_id, l.result.type]));
  assert.deepEqual(Object.fromEntries(types), {
    'cancel-0': 'succeeded',
    'cancel-1': 'canceled',
    'cancel-2': 'canceled',
    'cancel-3': 'canceled',
  });
  // Canceling an ended batch changes nothing.
  assert.equal((await sdk.messages.batches.cancel(batch.id)).processing_status, 'ended');
});

test('a batch retrieved past expires_at ends with its unprocessed requests expired; steps can follow retrieves', async () => {
  let now = Date.parse('2026-11-20T10:00:00Z');
  const timed = await startAnthropicEmulator({ clock: () => now, stepEveryRetrieves: 3 });
  try {
    const sdk = new Anthropic({
      apiKey: timed.apiKey,
      baseURL: timed.url,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-version': VERSION },
    });
    const expiring = await sdk.messages.batches.create({ requests: requests('late', 3) });
    timed.setOutcome('late-0', { type: 'succeeded' });
    now += 24 * 3600 * 1000;
    const expired = await sdk.messages.batches.retrieve(expiring.id);
    assert.equal(expired.processing_status, 'ended');
    assert.equal(expired.ended_at, '2026-11-21T10:00:00.000Z');
    assert.deepEqual(expired.request_counts, { processing: 0, succeeded: 1, errored: 0, canceled: 0, expired: 2 });

    const stepped = await sdk.messages.batches.create({ requests: requests('step', 2) });
    assert.equal((await sdk.messages.batches.retrieve(stepped.id)).processing_status, 'in_progress');
    assert.equal((await sdk.messages.batches.retrieve(stepped.id)).processing_status, 'in_progress');
    assert.equal((await sdk.messages.batches.retrieve(stepped.id)).processing_status, 'ended');
  } finally {
    await timed.close();
  }
});

test('list pages newest first with limit, after_id and before_id; the SDK auto-paginates', async () => {
  const paged = await startAnthropicEmulator();
  try {
    const sdk = new Anthropic({
      apiKey: paged.apiKey,
      baseURL: paged.url,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-version': VERSION },
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await sdk.messages.batches.create({ requests: requests(`list${i}`, 1) })).id);
    const newest = [...ids].reverse();

    const first = await sdk.messages.batches.list({ limit: 2 });
    assert.deepEqual(
      first.data.map((b) => b.id),
      newest.slice(0, 2),
    );
    assert.equal(first.has_more, true);
    assert.equal(first.first_id, newest[0]);
    assert.equal(first.last_id, newest[1]);
    assert.deepEqual(Object.keys(first.data[0] ?? {}).sort(), BATCH_FIELDS);

    const all: string[] = [];
    for await (const batch of sdk.messages.batches.list({ limit: 2 })) all.push(batch.id);
    assert.deepEqual(all, newest);
    assert.deepEqual(
      paged.log
        .filter((r) => r.method === 'GET')
        .slice(-3)
        .map((r) => r.query),
      [{ limit: '2' }, { limit: '2', after_id: newest[1] }, { limit: '2', after_id: newest[3] }],
    );

    const last = await sdk.messages.batches.list({ limit: 2, after_id: newest[3] });
    assert.deepEqual(
      last.data.map((b) => b.id),
      [newest[4]],
    );
    assert.equal(last.has_more, false);
    const newer = await sdk.messages.batches.list({ limit: 2, before_id: newest[4] });
    assert.deepEqual(
      newer.data.map((b) => b.id),
      [newest[2], newest[3]],
    );
    assert.equal(newer.has_more, true);
    const reverse: string[] = [];
    for await (const batch of sdk.messages.batches.list({ limit: 2, before_id: newest[4] })) reverse.push(batch.id);
    assert.deepEqual(reverse, [newest[2], newest[3], newest[0], newest[1]]);

    await assert.rejects(sdk.messages.batches.list({ limit: 1001 }), Anthropic.BadRequestError);
  } finally {
    await paged.close();
  }
});

test('delete refuses a batch still processing, removes an ended one; unknown ids are 404', async () => {
  const sdk = client();
  const batch = await sdk.messages.batches.create({ requests: requests('delete', 1) });
  await assert.rejects(sdk.messages.batches.delete(batch.id), Anthropic.BadRequestError);
  emulator.end(batch.id);
  assert.deepEqual(await sdk.messages.batches.delete(batch.id), { id: batch.id, type: 'message_batch_deleted' });
  await assert.rejects(sdk.messages.batches.retrieve(batch.id), (err: unknown) => {
    assert.ok(err instanceof Anthropic.NotFoundError);
    assert.equal(err.type, 'not_found_error');
    return true;
  });
  await assert.rejects(sdk.messages.batches.retrieve('msgbatch_nope'), Anthropic.NotFoundError);
  await assert.rejects(sdk.messages.batches.cancel('msgbatch_nope'), Anthropic.NotFoundError);
});

test('injected 429s with retry-after are retried by the SDK after the delay; 529 and 500 are typed', async () => {
  const sdk = client({ maxRetries: 2 });
  emulator.faults.failNext(2, { status: 429, retryAfterSeconds: 0.2, method: 'POST' });
  const startedAt = Date.now();
  const logged = emulator.log.length;
  const batch = await sdk.messages.batches.create({ requests: requests('retry', 1) });
  assert.ok(Date.now() - startedAt >= 400, 'the SDK waited retry-after twice');
  const tries = emulator.log.slice(logged);
  assert.deepEqual(
    tries.map((r) => [r.status, r.headers['x-stainless-retry-count']]),
    [
      [429, '0'],
      [429, '1'],
      [200, '2'],
    ],
  );
  assert.equal(emulator.batches().filter((b) => b.requests[0]?.custom_id === 'retry-0').length, 1);

  emulator.faults.failNext(1, { status: 529, retryAfterSeconds: null });
  await assert.rejects(client().messages.batches.retrieve(batch.id), (err: unknown) => {
    assert.ok(err instanceof Anthropic.InternalServerError);
    assert.equal(err.status, 529);
    assert.equal(err.type, 'overloaded_error');
    return true;
  });
  emulator.faults.failNext(1, { status: 429, retryAfterSeconds: null });
  await assert.rejects(client().messages.batches.retrieve(batch.id), Anthropic.RateLimitError);
  emulator.faults.failNext(1, { status: 500, retryAfterSeconds: 0.05, path: /\/results$/ });
  emulator.end(batch.id);
  assert.equal((await results(sdk, batch.id)).length, 1);
  assert.deepEqual(
    emulator.log.slice(-2).map((r) => r.status),
    [500, 200],
  );
});

test('a held create is applied on arrival (listed at once) and answered on release', async () => {
  const sdk = client();
  const held = emulator.holdNextCreate();
  const creating = sdk.messages.batches.create({ requests: requests('held', 2) });
  await held.arrived;
  const listed = await sdk.messages.batches.list({ limit: 1 });
  assert.equal(listed.data[0]?.request_counts.processing, 2);
  held.release();
  assert.equal((await creating).id, listed.data[0]?.id);

  const late = emulator.holdNextCreate('on-release');
  const aborted = new AbortController();
  const gone = sdk.messages.batches.create({ requests: requests('late-create', 1) }, { signal: aborted.signal });
  await late.arrived;
  const before = emulator.batches().length;
  aborted.abort(); // the client dies while the call is held
  await assert.rejects(gone, Anthropic.APIUserAbortError);
  late.release();
  // The provider still creates the batch.
  await eventually(
    async () => emulator.batches().length,
    (count) => count === before + 1,
  );
});

test('a new batch can answer 404 to its first reads, then be found', async () => {
  const sdk = client();
  emulator.faults.notFoundAfterCreate(2);
  const batch = await sdk.messages.batches.create({ requests: requests('ghost', 1) });
  emulator.faults.notFoundAfterCreate(0);
  await assert.rejects(sdk.messages.batches.retrieve(batch.id), Anthropic.NotFoundError);
  await assert.rejects(sdk.messages.batches.retrieve(batch.id), Anthropic.NotFoundError);
  assert.equal((await sdk.messages.batches.retrieve(batch.id)).id, batch.id);
});

test("the SDK's default version 2026-10-21 is recorded, and errors requests that set temperature, top_p or top_k", async () => {
  const sdk = client({ defaultHeaders: {} });
  const batch = await sdk.messages.batches.create({
    requests: [
      { custom_id: 'v-temp', params: params('hi', { temperature: 1 }) },
      { custom_id: 'v-topk', params: params('hi', { top_k: 5 }) },
      { custom_id: 'v-plain', params: params('hi') },
    ],
  });
  assert.equal(lastRequest().headers['anthropic-version'], '2026-10-21');
  emulator.end(batch.id);
  const byId = new Map((await results(sdk, batch.id)).map((l) => [l.custom_id, l.result]));
  const temp = byId.get('v-temp');
  assert.ok(temp?.type === 'errored');
  assert.equal(temp.error.error.message, 'temperature: Extra inputs are not permitted');
  assert.equal(byId.get('v-topk')?.type, 'errored');
  assert.equal(byId.get('v-plain')?.type, 'succeeded');

  const pinned = await client().messages.batches.create({
    requests: [{ custom_id: 'p-temp', params: params('hi', { temperature: 1 }) }],
  });
  emulator.end(pinned.id);
  assert.equal((await results(client(), pinned.id))[0]?.result.type, 'succeeded');
});
