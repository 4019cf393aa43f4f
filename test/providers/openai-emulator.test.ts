/**
 * Checks the OpenAI Files + Batch emulator (test/helpers/openai-emulator.ts) with the official
 * `openai` SDK: uploads, every batch status, output and error files (and their traps), pagination,
 * errors and retries. If the SDK parses what the emulator says, adapter tests against it are meaningful.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { EXTRA_FIELD } from '../helpers/emulator-http.js';
import { type OpenAIEmulator, startOpenAIEmulator } from '../helpers/openai-emulator.js';
import { eventually } from '../helpers/wait.js';

const BATCH_FIELDS = [
  'cancelled_at',
  'cancelling_at',
  'completed_at',
  'completion_window',
  'created_at',
  'endpoint',
  'error_file_id',
  'errors',
  'expired_at',
  'expires_at',
  'failed_at',
  'finalizing_at',
  'future_field',
  'id',
  'in_progress_at',
  'input_file_id',
  'metadata',
  'model',
  'object',
  'output_file_id',
  'request_counts',
  'status',
  'usage',
];

let emulator: OpenAIEmulator;
before(async () => {
  emulator = await startOpenAIEmulator();
});
after(() => emulator.close());

const client = (target: OpenAIEmulator = emulator, options: ConstructorParameters<typeof OpenAI>[0] = {}) =>
  new OpenAI({ apiKey: target.apiKey, baseURL: target.baseURL, maxRetries: 0, ...options });

interface Line {
  custom_id: string;
  method: string;
  url: string;
  body: Record<string, unknown>;
}
const line = (customId: string, body: Record<string, unknown> = {}): Line => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${customId}` }], ...body },
});
const lines = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => line(`${prefix}-${i}`));
const jsonl = (items: unknown[]) => `${items.map((item) => JSON.stringify(item)).join('\n')}\n`;

async function upload(sdk: OpenAI, items: unknown[] | string, filename = 'batch.jsonl') {
  const text = typeof items === 'string' ? items : jsonl(items);
  return sdk.files.create({ file: await toFile(Buffer.from(text), filename), purpose: 'batch' });
}

async function submit(sdk: OpenAI, items: unknown[] | string, metadata?: Record<string, string>) {
  const file = await upload(sdk, items);
  return sdk.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    metadata,
  });
}

async function fileLines(sdk: OpenAI, id: string) {
  const text = await (await sdk.files.content(id)).text();
  assert.ok(text.endsWith('}\n') && !text.includes('\n\n'));
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; custom_id: string; response: any; error: any });
}

test('upload, retrieve, download and delete a batch input file; the upload arrives as multipart', async () => {
  const sdk = client();
  const text = jsonl(lines('file', 3));
  const file = await upload(sdk, text);
  assert.deepEqual(Object.keys(file).sort(), [
    'bytes',
    'created_at',
    'expires_at',
    'filename',
    'future_field',
    'id',
    'object',
    'purpose',
    'status',
    'status_details',
  ]);
  assert.match(file.id, /^file-[A-Za-z0-9]{22}$/);
  assert.equal(file.object, 'file');
  assert.equal(file.purpose, 'batch');
  assert.equal(file.filename, 'batch.jsonl');
  assert.equal(file.bytes, Buffer.byteLength(text));
  assert.equal(file.expires_at, file.created_at + 30 * 24 * 3600);

  const arrived = emulator.log.at(-1);
  assert.equal(arrived?.path, '/v1/files');
  assert.equal(arrived?.headers.authorization, `Bearer ${emulator.apiKey}`);
  assert.match(String(arrived?.headers['content-type']), /^multipart\/form-data; boundary=/);
  const form = arrived?.body as {
    fields: Record<string, string>;
    files: Record<string, { filename: string; content: Buffer }>;
  };
  assert.deepEqual(form.fields, { purpose: 'batch' });
  assert.equal(form.files.file?.filename, 'batch.jsonl');
  assert.equal(form.files.file?.content.toString(), text);

  assert.deepEqual(await sdk.files.retrieve(file.id), file);
  const response = await sdk.files.content(file.id);
  assert.equal(emulator.log.at(-1)?.headers.accept, 'application/binary');
  const chunks: Buffer[] = [];
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  assert.equal(Buffer.concat(chunks).toString(), text);

  assert.deepEqual(await sdk.files.delete(file.id), { object: 'file', id: file.id, deleted: true });
  await assert.rejects(sdk.files.retrieve(file.id), OpenAI.NotFoundError);
  await assert.rejects(sdk.files.content(file.id), OpenAI.NotFoundError);
});

test('uploads are refused for a wrong key, a non-.jsonl name, another purpose, or more than the byte limit', async () => {
  const sdk = client();
  await assert.rejects(upload(client(emulator, { apiKey: 'sk-wrong-key' }), 'x'), (err: unknown) => {
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.code, 'invalid_api_key');
    return true;
  });
  const missing = await fetch(`${emulator.baseURL}/batches`);
  assert.equal(missing.status, 401);
  assert.ok(missing.headers.get('x-request-id'));
  await assert.rejects(upload(sdk, jsonl(lines('txt', 1)), 'batch.txt'), (err: unknown) => {
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.message, '400 Invalid file format for Batch API. Must be .jsonl');
    assert.equal(err.param, 'file');
    return true;
  });
  const tuning = sdk.files.create({ file: await toFile(Buffer.from('{}\n'), 'x.jsonl'), purpose: 'fine-tune' });
  await assert.rejects(tuning, OpenAI.BadRequestError);

  const small = await startOpenAIEmulator({ maxFileBytes: 1000 });
  try {
    await assert.rejects(upload(client(small), jsonl(lines('big', 20))), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.message, '400 File is too large.');
      return true;
    });
    assert.equal((await upload(client(small), jsonl(lines('fits', 2)))).purpose, 'batch');
  } finally {
    await small.close();
  }
});

test('batch create checks its body: endpoint, completion_window, input file, metadata, unknown arguments', async () => {
  const sdk = client();
  const file = await upload(sdk, lines('create', 1));
  const refused = async (body: Record<string, unknown>, param: string | null) => {
    await assert.rejects(sdk.batches.create(body as never), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.equal(err.param, param);
      return true;
    });
  };
  const good = { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' };
  await refused({ ...good, completion_window: '1h' }, 'completion_window');
  await refused({ ...good, endpoint: '/v1/embeddings' }, 'endpoint');
  await refused({ ...good, input_file_id: 'file-nope' }, 'input_file_id');
  await refused(
    { ...good, metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
    'metadata',
  );
  await refused({ ...good, metadata: { k: 'v'.repeat(513) } }, 'metadata');
  await refused({ ...good, idempotency_key: 'x' }, null);
  await refused({ endpoint: good.endpoint, completion_window: '24h' }, 'input_file_id');
  assert.equal((await sdk.batches.create(good as never)).status, 'validating');
});

test('a batch walks validating → in_progress → finalizing → completed, with shuffled output and error files', async () => {
  const sdk = client();
  const sent = lines('walk', 10);
  sent.push(line('walk-topk', { top_k: 5 }));
  sent.push(line('walk-short', { max_completion_tokens: 3 }));
  emulator.setOutcome('walk-1', {
    type: 'errored',
    error: {
      message: 'This model maximum context length is 128000 tokens.',
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  });
  emulator.setOutcome('walk-2', {
    type: 'succeeded',
    body: { usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } },
  });
  const created = await submit(sdk, sent, { barge_batch_id: 'bat_walk' });
  assert.deepEqual(Object.keys(created).sort(), BATCH_FIELDS);
  assert.match(created.id, /^batch_[0-9a-f]{32}$/);
  assert.equal(created.status, 'validating');
  assert.equal(created.model, null);
  assert.deepEqual(created.metadata, { barge_batch_id: 'bat_walk' });
  assert.deepEqual(created.request_counts, { total: 0, completed: 0, failed: 0 });
  assert.equal(created.expires_at, created.created_at + 24 * 3600);
  assert.equal(created.output_file_id, null);
  assert.deepEqual((created as unknown as typeof EXTRA_FIELD).future_field, EXTRA_FIELD.future_field);
  assert.deepEqual(emulator.log.at(-1)?.body, {
    input_file_id: created.input_file_id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    metadata: { barge_batch_id: 'bat_walk' },
  });

  emulator.step(created.id);
  const running = await sdk.batches.retrieve(created.id);
  assert.equal(running.status, 'in_progress');
  assert.ok(running.in_progress_at);
  assert.equal(running.model, 'gpt-4o-mini');
  assert.deepEqual(running.request_counts, { total: 12, completed: 0, failed: 0 });
  emulator.step(created.id);
  const finalizing = await sdk.batches.retrieve(created.id);
  assert.equal(finalizing.status, 'finalizing');
  assert.deepEqual(finalizing.request_counts, { total: 12, completed: 10, failed: 2 });
  assert.equal(finalizing.output_file_id, null);
  emulator.step(created.id);
  const done = await sdk.batches.retrieve(created.id);
  assert.equal(done.status, 'completed');
  assert.ok(done.completed_at && done.finalizing_at && done.completed_at >= done.finalizing_at);
  assert.ok(done.output_file_id && done.error_file_id);

  const output = await fileLines(sdk, done.output_file_id);
  assert.equal(output.length, 10);
  assert.notDeepEqual(
    output.map((l) => l.custom_id),
    sent.map((l) => l.custom_id).filter((id) => id !== 'walk-1' && id !== 'walk-topk'),
    'output comes back in another order',
  );
  const ok = output.find((l) => l.custom_id === 'walk-0');
  assert.match(ok?.id ?? '', /^batch_req_/);
  assert.equal(ok?.error, null);
  assert.equal(ok?.response.status_code, 200);
  const completion = ok?.response.body as OpenAI.Chat.ChatCompletion;
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.model, 'gpt-4o-mini');
  assert.equal(completion.choices[0]?.finish_reason, 'stop');
  assert.equal(completion.choices[0]?.message.role, 'assistant');
  assert.deepEqual((completion as unknown as typeof EXTRA_FIELD).future_field, EXTRA_FIELD.future_field);
  const short = output.find((l) => l.custom_id === 'walk-short')?.response.body as OpenAI.Chat.ChatCompletion;
  assert.equal(short.choices[0]?.finish_reason, 'length');
  assert.equal(short.usage?.completion_tokens, 3);
  const sum = (key: 'prompt_tokens' | 'completion_tokens') =>
    output.reduce((total, l) => total + ((l.response.body as OpenAI.Chat.ChatCompletion).usage?.[key] ?? 0), 0);
  assert.equal(done.usage?.input_tokens, sum('prompt_tokens'));
  assert.equal(done.usage?.output_tokens, sum('completion_tokens'));
  assert.equal(done.usage?.total_tokens, sum('prompt_tokens') + sum('completion_tokens'));

  const errors = new Map((await fileLines(sdk, done.error_file_id)).map((l) => [l.custom_id, l]));
  assert.deepEqual([...errors.keys()].sort(), ['walk-1', 'walk-topk']);
  const tooLong = errors.get('walk-1');
  assert.equal(tooLong?.error, null, 'a failed request has a top-level error of null');
  assert.equal(tooLong?.response.status_code, 400);
  assert.deepEqual(tooLong?.response.body, {
    error: {
      message: 'This model maximum context length is 128000 tokens.',
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  });
  assert.equal(errors.get('walk-topk')?.response.body.error.message, 'Unrecognized request argument supplied: top_k');

  const outputFile = await sdk.files.retrieve(done.output_file_id);
  assert.equal(outputFile.purpose, 'batch_output');
  assert.equal(outputFile.filename, `batch_${done.id}_output.jsonl`);
});

test('a batch whose every request failed is completed with output_file_id null and only an error file', async () => {
  const sdk = client();
  emulator.setOutcome('allbad-0', {
    type: 'errored',
    status_code: 429,
    error: { message: 'Rate limited', type: 'requests', code: 'rate_limit_exceeded' },
  });
  const batch = await submit(sdk, [lines('allbad', 1)[0], line('allbad-1', { messages: [] })]);
  emulator.endAll();
  const done = await sdk.batches.retrieve(batch.id);
  assert.equal(done.status, 'completed');
  assert.equal(done.output_file_id, null);
  assert.ok(done.error_file_id);
  assert.deepEqual(done.request_counts, { total: 2, completed: 0, failed: 2 });
  const errors = new Map((await fileLines(sdk, done.error_file_id)).map((l) => [l.custom_id, l.response]));
  assert.equal(errors.get('allbad-0').status_code, 429);
  assert.equal(errors.get('allbad-1').body.error.code, 'missing_required_parameter');
});

test('a bad input file fails the batch while validating, with errors.data naming code, line and param', async () => {
  const sdk = client();
  const text = [
    JSON.stringify(line('v-0')),
    '{not json',
    JSON.stringify(line('v-0')),
    JSON.stringify({ ...line('v-3'), url: '/v1/embeddings' }),
    JSON.stringify(line('v-4', { model: 'gpt-4o' })),
    JSON.stringify({ custom_id: 'v-5', url: '/v1/chat/completions', body: line('v-5').body }),
    JSON.stringify({ ...line('v-6'), method: 'GET' }),
  ].join('\n');
  const batch = await submit(sdk, text);
  emulator.step(batch.id);
  const failed = await sdk.batches.retrieve(batch.id);
  assert.equal(failed.status, 'failed');
  assert.ok(failed.failed_at);
  assert.equal(failed.in_progress_at, null);
  assert.equal(failed.errors?.object, 'list');
  assert.deepEqual(
    failed.errors?.data?.map((e) => [e.code, e.line, e.param]),
    [
      ['invalid_json_line', 2, null],
      ['duplicate_custom_id', 3, 'custom_id'],
      ['url_mismatch', 4, 'url'],
      ['model_mismatch', 5, 'body.model'],
      ['missing_required_parameter', 6, 'method'],
      ['invalid_method', 7, 'method'],
    ],
  );
  assert.equal(failed.errors?.data?.[0]?.message, 'This line is not parseable as valid JSON.');

  const limited = await startOpenAIEmulator({ maxRequests: 2 });
  try {
    const tooMany = await submit(client(limited), lines('many', 3));
    limited.endAll();
    const refused = await client(limited).batches.retrieve(tooMany.id);
    assert.deepEqual(
      refused.errors?.data?.map((e) => e.code),
      ['too_many_tasks'],
    );
  } finally {
    await limited.close();
  }

  const message =
    'Enqueued token limit reached for gpt-4o-mini in organization org-emulator. Limit: 2,000,000 enqueued tokens.';
  emulator.failNextValidation([{ code: 'token_limit_exceeded', line: null, message, param: null }]);
  const accepted = await submit(sdk, lines('tokens', 2));
  assert.equal(accepted.status, 'validating');
  emulator.endAll();
  const overLimit = await sdk.batches.retrieve(accepted.id);
  assert.equal(overLimit.status, 'failed');
  assert.deepEqual(overLimit.errors?.data, [{ code: 'token_limit_exceeded', line: null, message, param: null }]);
  assert.equal(overLimit.output_file_id, null);
  assert.equal(overLimit.error_file_id, null);
});

test('cancel walks cancelling → cancelled with a partial output file; cancelled requests are not failed', async () => {
  const sdk = client();
  const batch = await submit(sdk, lines('cancel', 5));
  emulator.step(batch.id);
  emulator.setOutcome('cancel-0', { type: 'succeeded' });
  emulator.setOutcome('cancel-1', { type: 'succeeded' });
  const cancelling = await sdk.batches.cancel(batch.id);
  assert.equal(cancelling.status, 'cancelling');
  assert.ok(cancelling.cancelling_at);
  assert.equal(emulator.log.at(-1)?.body, undefined);
  emulator.endAll();
  const cancelled = await sdk.batches.retrieve(batch.id);
  assert.equal(cancelled.status, 'cancelled');
  assert.ok(cancelled.cancelled_at);
  assert.deepEqual(cancelled.request_counts, { total: 5, completed: 2, failed: 0 });
  assert.ok(cancelled.output_file_id && cancelled.error_file_id);
  assert.deepEqual((await fileLines(sdk, cancelled.output_file_id)).map((l) => l.custom_id).sort(), [
    'cancel-0',
    'cancel-1',
  ]);
  const stopped = await fileLines(sdk, cancelled.error_file_id);
  assert.equal(stopped.length, 3);
  assert.ok(stopped.every((l) => l.response === null && l.error.code === 'batch_cancelled'));
  assert.equal((await sdk.batches.cancel(batch.id)).status, 'cancelled');

  const finished = await submit(sdk, lines('late-cancel', 1));
  emulator.endAll();
  await assert.rejects(sdk.batches.cancel(finished.id), OpenAI.BadRequestError);
});

test('an expired batch keeps a partial output file and lists the rest as batch_expired; steps can follow retrieves', async () => {
  let now = Date.parse('2026-11-20T10:00:00Z');
  const timed = await startOpenAIEmulator({ clock: () => now, stepEveryRetrieves: 1 });
  try {
    const sdk = client(timed);
    const batch = await submit(sdk, lines('exp', 4));
    assert.equal((await sdk.batches.retrieve(batch.id)).status, 'in_progress');
    timed.setOutcome('exp-2', { type: 'succeeded' });
    now += 24 * 3600 * 1000;
    const expired = await sdk.batches.retrieve(batch.id);
    assert.equal(expired.status, 'expired');
    assert.equal(expired.expired_at, expired.expires_at);
    assert.deepEqual(expired.request_counts, { total: 4, completed: 1, failed: 0 });
    assert.ok(expired.output_file_id && expired.error_file_id);
    assert.deepEqual(
      (await fileLines(sdk, expired.output_file_id)).map((l) => l.custom_id),
      ['exp-2'],
    );
    const lost = await fileLines(sdk, expired.error_file_id);
    assert.deepEqual(lost[0]?.error, {
      code: 'batch_expired',
      message: 'This request could not be executed before the completion window expired.',
    });

    const stepped = await submit(sdk, lines('step', 1));
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await sdk.batches.retrieve(stepped.id)).status);
    assert.deepEqual(statuses, ['in_progress', 'finalizing', 'completed']);
  } finally {
    await timed.close();
  }
  const sdk = client();
  const manual = await submit(sdk, lines('manual-exp', 2));
  emulator.expire(manual.id);
  const gone = await sdk.batches.retrieve(manual.id);
  assert.equal(gone.status, 'expired');
  assert.equal(gone.output_file_id, null);
});

test('list pages newest first with limit and after; the SDK auto-paginates; metadata finds a batch', async () => {
  const paged = await startOpenAIEmulator();
  try {
    const sdk = client(paged);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await submit(sdk, lines(`list${i}`, 1), { barge_batch_id: `bat_${i}` })).id);
    const newest = [...ids].reverse();

    const first = await sdk.batches.list({ limit: 2 });
    assert.deepEqual(
      first.data.map((b) => b.id),
      newest.slice(0, 2),
    );
    assert.equal(first.has_more, true);
    assert.deepEqual(Object.keys(first.data[0] ?? {}).sort(), BATCH_FIELDS);

    const all: OpenAI.Batches.Batch[] = [];
    for await (const batch of sdk.batches.list({ limit: 2 })) all.push(batch);
    assert.deepEqual(
      all.map((b) => b.id),
      newest,
    );
    assert.deepEqual(
      paged.log
        .filter((r) => r.path === '/v1/batches' && r.method === 'GET')
        .slice(-3)
        .map((r) => r.query),
      [{ limit: '2' }, { limit: '2', after: newest[1] }, { limit: '2', after: newest[3] }],
    );
    assert.equal(all.find((b) => b.metadata?.barge_batch_id === 'bat_3')?.id, ids[3]);

    const rawPage = (await (
      await fetch(`${paged.baseURL}/batches?limit=1`, { headers: { authorization: `Bearer ${paged.apiKey}` } })
    ).json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(rawPage).sort(), ['data', 'first_id', 'has_more', 'last_id', 'object']);
    await assert.rejects(sdk.batches.list({ limit: 101 }), OpenAI.BadRequestError);
  } finally {
    await paged.close();
  }
});

test('injected 429s with retry-after are retried by the SDK after the delay; 500 and 503 are typed', async () => {
  const sdk = client(emulator, { maxRetries: 2 });
  const file = await upload(sdk, lines('retry', 1));
  emulator.faults.failNext(2, { status: 429, retryAfterSeconds: 0.2, method: 'POST', path: /^\/v1\/batches$/ });
  const logged = emulator.log.length;
  const startedAt = Date.now();
  const batch = await sdk.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  assert.ok(Date.now() - startedAt >= 400, 'the SDK waited retry-after twice');
  assert.deepEqual(
    emulator.log.slice(logged).map((r) => [r.status, r.headers['x-stainless-retry-count']]),
    [
      [429, '0'],
      [429, '1'],
      [200, '2'],
    ],
  );
  assert.equal(emulator.batches().filter((b) => b.inputFileId === file.id).length, 1);

  emulator.faults.failNext(1, { status: 429, retryAfterSeconds: null });
  await assert.rejects(client().batches.retrieve(batch.id), (err: unknown) => {
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.type, 'requests');
    return true;
  });
  emulator.faults.failNext(1, { status: 500 });
  await assert.rejects(client().batches.retrieve(batch.id), OpenAI.InternalServerError);
  emulator.faults.failNext(1, { status: 503, retryAfterSeconds: 0.05, path: /\/content$/ });
  emulator.endAll();
  const done = await sdk.batches.retrieve(batch.id);
  assert.equal((await fileLines(sdk, done.output_file_id ?? '')).length, 1);
  assert.deepEqual(
    emulator.log.slice(-2).map((r) => r.status),
    [503, 200],
  );
});

test('a held create is applied on arrival (listed at once) and answered on release; a new batch can 404 first', async () => {
  const sdk = client();
  const file = await upload(sdk, lines('held', 2));
  const held = emulator.holdNextCreate();
  const params = {
    input_file_id: file.id,
    endpoint: '/v1/chat/completions' as const,
    completion_window: '24h' as const,
    metadata: { barge_batch_id: 'bat_held' },
  };
  const creating = sdk.batches.create(params);
  await held.arrived;
  const listed = await sdk.batches.list({ limit: 1 });
  assert.equal(listed.data[0]?.metadata?.barge_batch_id, 'bat_held');
  held.release();
  assert.equal((await creating).id, listed.data[0]?.id);

  const late = emulator.holdNextCreate('on-release');
  const aborted = new AbortController();
  const gone = sdk.batches.create(params, { signal: aborted.signal });
  await late.arrived;
  const before = emulator.batches().length;
  aborted.abort(); // the client dies while the call is held
  await assert.rejects(gone, OpenAI.APIUserAbortError);
  late.release();
  await eventually(
    async () => emulator.batches().length,
    (count) => count === before + 1,
  );

  emulator.faults.notFoundAfterCreate(1);
  const ghost = await sdk.batches.create(params);
  emulator.faults.notFoundAfterCreate(0);
  await assert.rejects(sdk.batches.retrieve(ghost.id), OpenAI.NotFoundError);
  assert.equal((await sdk.batches.retrieve(ghost.id)).id, ghost.id);
});
