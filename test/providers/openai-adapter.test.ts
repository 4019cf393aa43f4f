/**
 * The OpenAI Batch adapter (src/providers/openai/) driven directly against the OpenAI emulator on
 * loopback, no database: the two submit steps and the input file they upload, the status walk,
 * results of every terminal shape (field-notes.md §3.2), cancel, cleanup, finding the batch of a
 * lost create, error kinds, and a 50,000-line output file read as it downloads.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.js';
import { OpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import {
  type BatchRequest,
  type JobRef,
  ProviderError,
  type RequestResult,
  type SubmitStep,
} from '../../src/providers/provider.js';
import { type OpenAIEmulator, startOpenAIEmulator } from '../helpers/openai-emulator.js';
import { freePort } from '../helpers/wait.js';

const MODEL = 'gpt-4o-mini';

let emulator: OpenAIEmulator;
let provider: OpenAIProvider;
before(async () => {
  emulator = await startOpenAIEmulator();
  provider = adapterFor(emulator.baseURL);
});
after(() => emulator.close());

function adapterFor(baseUrl: string, apiKey = emulator.apiKey) {
  return new OpenAIProvider({ apiKey, baseUrl, clock: systemClock });
}

async function* stream(requests: BatchRequest[]): AsyncIterable<BatchRequest> {
  for (const request of requests) yield request;
}

const simple = (customId: string, content = `question ${customId}`): BatchRequest => ({
  customId,
  input: JSON.stringify({ max_tokens: 64, messages: [{ role: 'user', content }] }),
});
const simples = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => simple(`${prefix}_${i}`));

/** Runs both submit steps, as the pipeline does (persisting the state between them). */
async function submitAll(batchId: string, requests: BatchRequest[], target = provider) {
  const input = { batchId, model: MODEL, requestCount: requests.length, state: null as string | null };
  const first = await target.submit({ ...input, requests: stream(requests) });
  assert.equal(first.kind, 'progress');
  const second = await target.submit({ ...input, requests: stream([]), state: first.state });
  assert.equal(second.kind, 'submitted');
  return jobRef(batchId, second, requests.length);
}

function jobRef(batchId: string, step: SubmitStep, requestCount: number, submittedAt = Date.now()): JobRef {
  assert.equal(step.kind, 'submitted');
  return {
    batchId,
    jobId: step.jobId,
    model: MODEL,
    requestCount,
    submittedAt,
    canceledAt: null,
    state: step.state,
    requests: () => stream([]),
    customIds: async function* () {},
  };
}

async function collect(results: AsyncIterable<RequestResult>) {
  const byId = new Map<string, RequestResult>();
  for await (const result of results) byId.set(result.customId, result);
  return byId;
}

async function rejectsWith(
  promise: Promise<unknown>,
  kind: ProviderError['kind'],
  check?: (err: ProviderError) => void,
) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ProviderError, `a ProviderError, not ${String(err)}`);
    assert.equal(err.kind, kind, err.message);
    check?.(err);
    return true;
  });
}

test('submit uploads the translated JSONL (purpose batch), then creates a batch tagged with barge_batch_id', async () => {
  const requests: BatchRequest[] = [
    {
      customId: 'crg_full',
      input: JSON.stringify({
        max_tokens: 200,
        system: 'Answer in French.',
        temperature: 0.3,
        top_p: 0.8,
        stop_sequences: ['FIN'],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
          { role: 'assistant', content: 'Bonjour.' },
          { role: 'user', content: 'Again?' },
        ],
      }),
    },
    simple('crg_plain', 'plain ✓'),
  ];
  const filesBefore = emulator.files().length;
  const input = { batchId: 'bat_submit', model: MODEL, requestCount: 2, requests: stream(requests), state: null };
  const first = await provider.submit(input);
  assert.equal(first.kind, 'progress');
  const { inputFileId } = JSON.parse(first.state) as { inputFileId: string };
  assert.equal(emulator.files().length, filesBefore + 1);
  assert.equal(emulator.batches().filter((b) => b.inputFileId === inputFileId).length, 0, 'no batch yet');

  const file = emulator.file(inputFileId);
  assert.ok(file);
  assert.equal(file.purpose, 'batch');
  assert.match(file.filename, /\.jsonl$/);
  const upload = emulator.log.findLast((r) => r.method === 'POST' && r.path === '/v1/files');
  const form = upload?.body as { fields: Record<string, string>; files: Record<string, { contentType: string }> };
  assert.deepEqual(form.fields, {
    purpose: 'batch',
    'expires_after[anchor]': 'created_at',
    'expires_after[seconds]': String(7 * 24 * 3600),
  });
  assert.equal(form.files.file?.contentType, 'application/jsonl');
  // Streamed: a chunked body, no length known in advance.
  assert.equal(upload?.headers['transfer-encoding'], 'chunked');
  assert.equal(upload?.headers['content-length'], undefined);
  const lines = file.content
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(lines, [
    {
      custom_id: 'crg_full',
      method: 'POST',
      url: '/v1/chat/completions',
      body: {
        model: MODEL,
        messages: [
          { role: 'system', content: 'Answer in French.' },
          { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
          { role: 'assistant', content: 'Bonjour.' },
          { role: 'user', content: 'Again?' },
        ],
        max_completion_tokens: 200,
        stop: ['FIN'],
        temperature: 0.3,
        top_p: 0.8,
      },
    },
    {
      custom_id: 'crg_plain',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: MODEL, messages: [{ role: 'user', content: 'plain ✓' }], max_completion_tokens: 64 },
    },
  ]);

  // The second step reads no requests and reuses the uploaded file.
  const second = await provider.submit({ ...input, requests: stream([]), state: first.state });
  assert.equal(second.kind, 'submitted');
  assert.equal(second.state, first.state);
  assert.equal(emulator.files().length, filesBefore + 1);
  const batch = emulator.batch(second.jobId);
  assert.equal(batch?.inputFileId, inputFileId);
  assert.deepEqual(batch?.metadata, { barge_batch_id: 'bat_submit' });
  const create = emulator.log.findLast((r) => r.method === 'POST' && r.path === '/v1/batches');
  assert.deepEqual(create?.body, {
    input_file_id: inputFileId,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    metadata: { barge_batch_id: 'bat_submit' },
  });
  assert.equal(create?.headers['x-stainless-retry-count'], '0');
});

test('status walks running → ended; results translate successes and carry errored lines', async () => {
  emulator.setOutcome('crg_walk_1', {
    type: 'errored',
    status_code: 400,
    error: {
      message: 'This model’s maximum context length is 128000 tokens.',
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  });
  emulator.setOutcome('crg_walk_2', {
    type: 'succeeded',
    body: { choices: [{ index: 0, message: { role: 'assistant', content: 'cut' }, finish_reason: 'length' }] },
  });
  const job = await submitAll('bat_walk', simples('crg_walk', 3));
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const status = await provider.status(job);
    assert.deepEqual(status, { state: 'running', expectedEndAt: null });
    seen.push(emulator.batch(job.jobId)?.status ?? '');
    emulator.step(job.jobId);
  }
  assert.deepEqual(seen, ['validating', 'in_progress', 'finalizing']);
  assert.deepEqual(await provider.status(job), { state: 'ended' });

  const results = await collect(provider.results(job));
  assert.equal(results.size, 3);
  const ok = results.get('crg_walk_0');
  assert.ok(ok?.success);
  const outputFileId = emulator.batch(job.jobId)?.outputFileId ?? '';
  const raw = (emulator.file(outputFileId)?.content.toString() ?? '')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
    .find((l) => l.custom_id === 'crg_walk_0').response.body;
  assert.deepEqual(ok.response, {
    id: raw.id,
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: raw.choices[0].message.content }],
    model: MODEL,
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: raw.usage.prompt_tokens,
      cache_read_input_tokens: 0,
      output_tokens: raw.usage.completion_tokens,
    },
  });
  assert.match(ok.response.id, /^chatcmpl-/);
  assert.deepEqual(results.get('crg_walk_1'), {
    customId: 'crg_walk_1',
    success: false,
    kind: 'errored',
    error: 'invalid_request_error: This model’s maximum context length is 128000 tokens.',
  });
  const cut = results.get('crg_walk_2');
  assert.ok(cut?.success);
  assert.deepEqual([cut.response.stop_reason, cut.response.content], ['max_tokens', [{ type: 'text', text: 'cut' }]]);
});

test('an all-failed batch (completed, output_file_id null) gives every failure from the error file', async () => {
  for (const id of ['crg_bad_0', 'crg_bad_1']) {
    emulator.setOutcome(id, {
      type: 'errored',
      status_code: 429,
      error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
    });
  }
  const job = await submitAll('bat_bad', simples('crg_bad', 2));
  emulator.endAll();
  const batch = emulator.batch(job.jobId);
  assert.deepEqual([batch?.status, batch?.outputFileId], ['completed', null]);
  assert.deepEqual(await provider.status(job), { state: 'ended' });
  const results = [...(await collect(provider.results(job))).values()];
  assert.deepEqual(
    results.map((r) => (r.success ? 'ok' : `${r.kind} ${r.error}`)),
    ['errored requests: Rate limit reached for requests', 'errored requests: Rate limit reached for requests'],
  );
});

test('an expired batch gives its partial output and the rest as expired', async () => {
  const job = await submitAll('bat_exp', simples('crg_exp', 3));
  emulator.step(job.jobId); // in_progress
  emulator.setOutcome('crg_exp_1', { type: 'succeeded' });
  emulator.expire(job.jobId);
  assert.deepEqual(await provider.status(job), { state: 'ended' });
  const results = await collect(provider.results(job));
  assert.ok(results.get('crg_exp_1')?.success);
  for (const id of ['crg_exp_0', 'crg_exp_2']) {
    assert.deepEqual(results.get(id), {
      customId: id,
      success: false,
      kind: 'expired',
      error: 'expired: This request could not be executed before the completion window expired.',
    });
  }
});

test('cancel: a running batch is cancelling, then cancelled with partial results; cancel again is no error', async () => {
  const job = await submitAll('bat_cancel', simples('crg_cancel', 3));
  emulator.step(job.jobId);
  emulator.setOutcome('crg_cancel_0', { type: 'succeeded' });
  await provider.cancel(job);
  assert.equal(emulator.batch(job.jobId)?.status, 'cancelling');
  assert.deepEqual(await provider.status(job), { state: 'running', expectedEndAt: null });
  await provider.cancel(job); // cancelling already
  emulator.endAll();
  assert.deepEqual(await provider.status(job), { state: 'ended' });
  await provider.cancel(job); // cancelled already
  const results = await collect(provider.results(job));
  assert.ok(results.get('crg_cancel_0')?.success);
  assert.deepEqual(results.get('crg_cancel_2'), {
    customId: 'crg_cancel_2',
    success: false,
    kind: 'canceled',
    error: 'canceled: This request was cancelled before it could be executed.',
  });

  const done = await submitAll('bat_cancel_done', simples('crg_cancel_done', 1));
  emulator.endAll();
  await provider.cancel(done); // completed: OpenAI says 400, which is no error here
});

test('a batch failed after acceptance (token_limit_exceeded) is a failed status with OpenAI’s text', async () => {
  const message =
    'Enqueued token limit reached for gpt-4o-mini in organization org-emulator. Limit: 2,000,000 enqueued tokens.';
  emulator.failNextValidation([{ code: 'token_limit_exceeded', line: null, message, param: null }]);
  const job = await submitAll('bat_tokens', simples('crg_tokens', 2));
  assert.deepEqual(await provider.status(job), { state: 'running', expectedEndAt: null });
  emulator.endAll();
  assert.deepEqual(await provider.status(job), { state: 'failed', message: `token_limit_exceeded: ${message}` });
  assert.equal((await collect(provider.results(job))).size, 0);
  await provider.cancel(job); // nothing to cancel: no error
});

test('cleanup deletes the uploaded input file; a file already gone is fine', async () => {
  const job = await submitAll('bat_clean', simples('crg_clean', 1));
  emulator.endAll();
  const { inputFileId } = JSON.parse(job.state ?? '') as { inputFileId: string };
  assert.equal(emulator.file(inputFileId)?.deleted, false);
  await provider.cleanup(job);
  assert.equal(emulator.file(inputFileId)?.deleted, true);
  await provider.cleanup(job);
  await provider.cleanup({ ...job, state: null });
});

test('findSubmitted finds the batch of a lost create by its barge_batch_id, and no other batch', async () => {
  const startedAt = Date.now();
  await submitAll('bat_other', simples('crg_other', 1));
  const input = { batchId: 'bat_lost', model: MODEL, requestCount: 1, requests: stream([simple('crg_lost')]) };
  const uploaded = await provider.submit({ ...input, state: null });
  assert.equal(uploaded.kind, 'progress');
  const held = emulator.holdNextCreate();
  const creating = provider.submit({ ...input, state: uploaded.state });
  await held.arrived; // OpenAI has the batch; its answer has not come back
  const lookup = { batchId: 'bat_lost', requestCount: 1, startedAt, until: Date.now(), state: null };
  const found = await provider.findSubmitted(lookup);
  const lost = emulator.batches().find((b) => b.metadata?.barge_batch_id === 'bat_lost');
  assert.deepEqual(found, [{ jobId: lost?.id, state: uploaded.state, match: 'exact' }]);
  held.release();
  const created = await creating;
  assert.equal(created.kind === 'submitted' && created.jobId, lost?.id);
  assert.deepEqual(await provider.findSubmitted({ ...lookup, batchId: 'bat_nobody' }), []);
});

test('findSubmitted pages back to the submission start and stops at the first older batch', async () => {
  let now = Date.parse('2026-11-20T10:00:00Z');
  const timed = await startOpenAIEmulator({ clock: () => now });
  try {
    const target = adapterFor(timed.baseURL, timed.apiKey);
    await submitAll('bat_old', simples('crg_old', 1), target);
    now += 10 * 60_000;
    const startedAt = now;
    await submitAll('bat_page', simples('crg_page', 1), target);
    // A batch created directly (not through the adapter) with the tag counts too.
    const direct = await fetch(`${timed.baseURL}/batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${timed.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        input_file_id: timed.batches()[1]?.inputFileId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { barge_batch_id: 'bat_page' },
      }),
    });
    const directId = ((await direct.json()) as { id: string }).id;
    for (let i = 0; i < 120; i++) await submitAll(`bat_filler_${i}`, simples(`crg_filler_${i}`, 1), target);
    const lists = () => timed.log.filter((r) => r.method === 'GET' && r.path === '/v1/batches').length;

    const before = lists();
    const found = await target.findSubmitted({
      batchId: 'bat_page',
      requestCount: 1,
      startedAt,
      until: now,
      state: null,
    });
    assert.deepEqual(found.map((f) => f.jobId).sort(), [directId, timed.batches()[1]?.id].sort());
    assert.equal(lists() - before, 2, 'two pages of 100, then the older batch ends the walk');

    const old = await target.findSubmitted({
      batchId: 'bat_old',
      requestCount: 1,
      startedAt,
      until: now,
      state: null,
    });
    assert.deepEqual(old, [], 'created before the window (less a minute of slack)');
    const inSlack = await target.findSubmitted({
      batchId: 'bat_old',
      requestCount: 1,
      startedAt: startedAt - 10 * 60_000 + 30_000,
      until: now,
      state: null,
    });
    assert.equal(inSlack.length, 1);
  } finally {
    await timed.close();
  }
});

test('errors: 429 → rate_limited with retry-after; 5xx → retryable; 401 → auth without the key; 400 → rejected', async () => {
  emulator.faults.failNext(1, { status: 429, retryAfterSeconds: 2, path: /^\/v1\/files$/ });
  const input = { batchId: 'bat_err', model: MODEL, requestCount: 1, state: null };
  await rejectsWith(provider.submit({ ...input, requests: stream([simple('crg_err')]) }), 'rate_limited', (err) => {
    assert.equal(err.retryAfterMs, 2000);
    assert.match(err.message, /^requests: injected failure$/);
  });

  const job = await submitAll('bat_err', [simple('crg_err')]);
  emulator.faults.failNext(1, { status: 500, path: /^\/v1\/batches\// });
  await rejectsWith(provider.status(job), 'retryable');
  emulator.faults.failNext(1, { status: 503, path: /\/content$/ });
  emulator.endAll();
  await rejectsWith(collect(provider.results(job)), 'retryable');
  assert.equal((await collect(provider.results(job))).size, 1);

  const wrongKey = 'sk-wrong-secret-key-1234';
  await rejectsWith(adapterFor(emulator.baseURL, wrongKey).status(job), 'auth', (err) => {
    assert.ok(!err.message.includes(wrongKey), err.message);
    assert.match(err.message, /^invalid_request_error: Incorrect API key provided/);
  });

  const missingFile = JSON.stringify({ inputFileId: 'file-doesnotexist' });
  await rejectsWith(provider.submit({ ...input, requests: stream([]), state: missingFile }), 'rejected', (err) =>
    assert.match(err.message, /^invalid_request_error: Invalid 'input_file_id'/),
  );

  const closed = adapterFor(`http://127.0.0.1:${await freePort()}/v1`);
  await rejectsWith(closed.status(job), 'retryable', (err) => assert.match(err.message, /^connection_error: /));
});

test('a 404 is retryable for a batch created moments ago, rejected for an old one', async () => {
  emulator.faults.notFoundAfterCreate(2);
  const job = await submitAll('bat_ghost', [simple('crg_ghost')]);
  emulator.faults.notFoundAfterCreate(0);
  await rejectsWith(provider.status(job), 'retryable');
  await rejectsWith(provider.status({ ...job, submittedAt: Date.now() - 3_600_000 }), 'rejected');
  assert.deepEqual(await provider.status(job), { state: 'running', expectedEndAt: null });
});

test('an error from the requests being read stops the upload and is passed on as is', async () => {
  const broken = (async function* () {
    yield simple('crg_broken');
    throw new Error('store read failed');
  })();
  const input = { batchId: 'bat_broken', model: MODEL, requestCount: 2, state: null };
  const files = emulator.files().length;
  await assert.rejects(provider.submit({ ...input, requests: broken }), /^Error: store read failed$/);
  assert.equal(emulator.files().length, files);
});

test('a 50,000-line output file is read as it downloads', async () => {
  const count = 50_000;
  const requests = Array.from({ length: count }, (_, i) => ({
    customId: `crg_many_${i}`,
    input: '{"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}',
  }));
  const job = await submitAll('bat_many', requests);
  emulator.endAll();
  const outputFileId = emulator.batch(job.jobId)?.outputFileId ?? '';
  const size = emulator.file(outputFileId)?.content.length ?? 0;

  // A loopback proxy that sends the first megabyte of the file and holds the rest back until the
  // adapter has yielded a result: results must come before the download ends.
  let sent = 0;
  let releaseTail!: () => void;
  const tailReleased = new Promise<void>((resolve) => {
    releaseTail = resolve;
  });
  const proxy = createServer(async (req, res) => {
    const upstream = await fetch(`${emulator.url}${req.url}`, {
      headers: { authorization: req.headers.authorization ?? '' },
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    if (!req.url?.endsWith('/content')) {
      res.end(body);
      return;
    }
    const head = 1024 * 1024;
    res.write(body.subarray(0, head));
    sent = head;
    await tailReleased;
    sent = body.length;
    res.end(body.subarray(head));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    const through = adapterFor(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`);
    let results = 0;
    let sentAtFirst = -1;
    for await (const result of through.results(job)) {
      if (results === 0) {
        sentAtFirst = sent;
        releaseTail();
      }
      assert.ok(result.success);
      results++;
    }
    assert.equal(results, count);
    assert.ok(sentAtFirst > 0 && sentAtFirst < size, `first result after ${sentAtFirst} of ${size} bytes`);

    // A consumer that stops early ends the download instead of leaving it open.
    for await (const result of provider.results(job)) {
      assert.ok(result.success);
      break;
    }
  } finally {
    releaseTail();
    proxy.closeAllConnections();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
  }
});
