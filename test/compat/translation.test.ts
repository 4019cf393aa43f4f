/**
 * The translations of the provider-compatible endpoints, each direction a pure function, checked
 * table by table from the wire formats: OpenAI batch lines → barge params, a cargo's outcome →
 * Anthropic result lines and OpenAI output/error lines and chat completions, the batch and file
 * objects, and barge's errors → each API's error shape.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { messageBatchOf, resultLineOf } from '../../src/compat/anthropic/message-batch.js';
import { RequestsReader } from '../../src/compat/anthropic/requests-reader.js';
import { publicBaseOf } from '../../src/compat/deps.js';
import { anthropicError, compatErrors, openAIError } from '../../src/compat/error-shapes.js';
import { linesOfChunks } from '../../src/compat/openai/batch-lines.js';
import { type LineProblem, translateLine } from '../../src/compat/openai/chat-request.js';
import { batchObjectOf } from '../../src/compat/openai/objects.js';
import { chatCompletionOf, outputLineOf } from '../../src/compat/openai/output-lines.js';
import { outcomeOf } from '../../src/compat/request-outcome.js';
import { loadConfig } from '../../src/config.js';
import { type ApiError, errors } from '../../src/domain/errors.js';

const envelope = (body: unknown) => ({ custom_id: 'c1', method: 'POST', url: '/v1/chat/completions', body });
const user = (content: unknown) => ({ role: 'user', content });

describe('OpenAI → barge: a batch line into params', () => {
  const translated: [string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'model and a user message',
      { model: 'svc-mock', messages: [user('Hi')] },
      { model: 'svc-mock', messages: [user('Hi')] },
    ],
    [
      'a system message becomes system (a string stays one)',
      { model: 'm', messages: [{ role: 'system', content: 'Be brief.' }, user('Hi')] },
      { model: 'm', system: 'Be brief.', messages: [user('Hi')] },
    ],
    [
      'system and developer messages become system blocks, in order',
      {
        model: 'm',
        messages: [
          { role: 'system', content: 'One.' },
          user('Hi'),
          { role: 'developer', content: [{ type: 'text', text: 'Two.' }] },
        ],
      },
      {
        model: 'm',
        system: [
          { type: 'text', text: 'One.' },
          { type: 'text', text: 'Two.' },
        ],
        messages: [user('Hi')],
      },
    ],
    [
      'text parts become text blocks; an assistant turn stays',
      {
        model: 'm',
        messages: [user([{ type: 'text', text: 'a' }]), { role: 'assistant', content: 'b' }, user('c')],
      },
      { model: 'm', messages: [user([{ type: 'text', text: 'a' }]), { role: 'assistant', content: 'b' }, user('c')] },
    ],
    [
      'max_completion_tokens → max_tokens',
      { model: 'm', messages: [user('x')], max_completion_tokens: 7 },
      { model: 'm', messages: [user('x')], max_tokens: 7 },
    ],
    [
      'max_tokens → max_tokens',
      { model: 'm', messages: [user('x')], max_tokens: 9 },
      { model: 'm', messages: [user('x')], max_tokens: 9 },
    ],
    [
      'max_completion_tokens wins over max_tokens',
      { model: 'm', messages: [user('x')], max_tokens: 9, max_completion_tokens: 5 },
      { model: 'm', messages: [user('x')], max_tokens: 5 },
    ],
    [
      'a stop string → stop_sequences',
      { model: 'm', messages: [user('x')], stop: 'END' },
      { model: 'm', messages: [user('x')], stop_sequences: ['END'] },
    ],
    [
      'stop strings → stop_sequences',
      { model: 'm', messages: [user('x')], stop: ['A', 'B'] },
      { model: 'm', messages: [user('x')], stop_sequences: ['A', 'B'] },
    ],
    [
      'temperature and top_p kept; n 1, stream false, user and null fields accepted and dropped',
      {
        model: 'm',
        messages: [user('x')],
        temperature: 0.3,
        top_p: 0.9,
        n: 1,
        stream: false,
        user: 'u',
        store: true,
        seed: null,
      },
      { model: 'm', messages: [user('x')], temperature: 0.3, top_p: 0.9 },
    ],
    [
      'response_format text and logprobs false ask for nothing',
      { model: 'm', messages: [user('x')], response_format: { type: 'text' }, logprobs: false },
      { model: 'm', messages: [user('x')] },
    ],
  ];
  for (const [name, body, params] of translated) {
    test(name, () => {
      const line = translateLine(envelope(body));
      assert.ok(line.ok, JSON.stringify(line));
      assert.equal(line.customId, 'c1');
      assert.deepEqual(line.params, params);
    });
  }

  const refused: [string, unknown, Pick<LineProblem, 'code' | 'param'>][] = [
    ['not an object', [1], { code: 'invalid_json_line', param: null }],
    [
      'no custom_id',
      { method: 'POST', url: '/v1/chat/completions', body: {} },
      { code: 'missing_required_parameter', param: 'custom_id' },
    ],
    ['a GET', { ...envelope({}), method: 'GET' }, { code: 'invalid_method', param: 'method' }],
    ['another url', { ...envelope({}), url: '/v1/embeddings' }, { code: 'url_mismatch', param: 'url' }],
    [
      'a long custom_id',
      { ...envelope({}), custom_id: 'x'.repeat(257) },
      { code: 'invalid_value', param: 'custom_id' },
    ],
    ['an extra field', { ...envelope({}), extra: 1 }, { code: 'unsupported_parameter', param: 'extra' }],
    ['no model', envelope({ messages: [user('x')] }), { code: 'missing_required_parameter', param: 'body.model' }],
    ['no messages', envelope({ model: 'm' }), { code: 'missing_required_parameter', param: 'body.messages' }],
    ['n 2', envelope({ model: 'm', messages: [user('x')], n: 2 }), { code: 'unsupported_parameter', param: 'body.n' }],
    [
      'tools',
      envelope({ model: 'm', messages: [user('x')], tools: [] }),
      { code: 'unsupported_parameter', param: 'body.tools' },
    ],
    [
      'tool_choice',
      envelope({ model: 'm', messages: [user('x')], tool_choice: 'auto' }),
      { code: 'unsupported_parameter', param: 'body.tool_choice' },
    ],
    [
      'response_format json',
      envelope({ model: 'm', messages: [user('x')], response_format: { type: 'json_object' } }),
      { code: 'unsupported_parameter', param: 'body.response_format' },
    ],
    [
      'logprobs',
      envelope({ model: 'm', messages: [user('x')], logprobs: true }),
      { code: 'unsupported_parameter', param: 'body.logprobs' },
    ],
    [
      'audio',
      envelope({ model: 'm', messages: [user('x')], audio: { voice: 'alloy' } }),
      { code: 'unsupported_parameter', param: 'body.audio' },
    ],
    [
      'an unknown field',
      envelope({ model: 'm', messages: [user('x')], frequency_penalty: 1 }),
      { code: 'unsupported_parameter', param: 'body.frequency_penalty' },
    ],
    [
      'an image part',
      envelope({ model: 'm', messages: [user([{ type: 'image_url', image_url: { url: 'https://x/a.png' } }])] }),
      { code: 'unsupported_parameter', param: 'body.messages[0].content[0]' },
    ],
    [
      'an audio part',
      envelope({
        model: 'm',
        messages: [
          user('a'),
          user([
            { type: 'text', text: 'b' },
            { type: 'input_audio', input_audio: {} },
          ]),
        ],
      }),
      { code: 'unsupported_parameter', param: 'body.messages[1].content[1]' },
    ],
    [
      'a tool message',
      envelope({ model: 'm', messages: [user('x'), { role: 'tool', content: 'r', tool_call_id: 't' }] }),
      { code: 'unsupported_parameter', param: 'body.messages[1].tool_call_id' },
    ],
    [
      'tool calls of an assistant turn',
      envelope({ model: 'm', messages: [user('x'), { role: 'assistant', content: null, tool_calls: [] }] }),
      { code: 'unsupported_parameter', param: 'body.messages[1].tool_calls' },
    ],
  ];
  for (const [name, value, problem] of refused) {
    test(`refused: ${name}`, () => {
      const line = translateLine(value);
      assert.equal(line.ok, false);
      assert.ok(!line.ok);
      const [first] = line.problems;
      assert.deepEqual({ code: first?.code, param: first?.param }, problem);
      assert.ok(first?.message);
    });
  }

  test('a barge path is named by the field of the line it came from', () => {
    const line = translateLine(
      envelope({
        model: 'm',
        messages: [{ role: 'system', content: 'S' }, user('a'), user([{ type: 'text', text: '' }])],
        stop: 'X',
        max_tokens: 0,
      }),
    );
    assert.ok(line.ok);
    assert.equal(line.fieldOf('/params/messages/1/content/0/text'), 'body.messages[2].content[0].text');
    assert.equal(line.fieldOf('/params/system'), 'body.messages[0]');
    assert.equal(line.fieldOf('/params/max_tokens'), 'body.max_tokens');
    assert.equal(line.fieldOf('/params/stop_sequences/0'), 'body.stop');
    assert.equal(line.fieldOf('/params/temperature'), 'body.temperature');
  });
});

describe('a cargo into its outcome', () => {
  const cases: [string, Parameters<typeof outcomeOf>[0], ReturnType<typeof outcomeOf>][] = [
    ['pending', { status: 'pending', success: null, response: null, errorMessage: null }, { type: 'processing' }],
    ['processing', { status: 'processing', success: null, response: null, errorMessage: null }, { type: 'processing' }],
    [
      'completed',
      { status: 'completed', success: 1, response: '{"id":"m"}', errorMessage: null },
      { type: 'succeeded', messageJson: '{"id":"m"}' },
    ],
    [
      'a provider error',
      { status: 'failed', success: 0, response: null, errorMessage: 'invalid_request_error: max_tokens is too large' },
      { type: 'errored', errorType: 'invalid_request_error', message: 'max_tokens is too large' },
    ],
    [
      'an error without a provider type',
      { status: 'failed', success: 0, response: null, errorMessage: 'http_500: upstream' },
      { type: 'errored', errorType: 'api_error', message: 'http_500: upstream' },
    ],
    [
      'canceled by its project',
      { status: 'canceled', success: 0, response: null, errorMessage: 'canceled' },
      { type: 'canceled', message: 'canceled' },
    ],
    [
      'canceled by the provider',
      {
        status: 'failed',
        success: 0,
        response: null,
        errorMessage: 'canceled: the batch was canceled before this request ran',
      },
      { type: 'canceled', message: 'canceled: the batch was canceled before this request ran' },
    ],
    [
      'expired',
      { status: 'callback_failed', success: 0, response: null, errorMessage: 'expired: the batch did not complete' },
      { type: 'expired', message: 'expired: the batch did not complete' },
    ],
  ];
  for (const [name, cargo, outcome] of cases) test(name, () => assert.deepEqual(outcomeOf(cargo), outcome));
});

describe('barge → Anthropic: result lines and the MessageBatch', () => {
  const lines: [Parameters<typeof resultLineOf>[1], unknown][] = [
    [
      { type: 'succeeded', messageJson: '{"id":"msg_1","type":"message"}' },
      { type: 'succeeded', message: { id: 'msg_1', type: 'message' } },
    ],
    [
      { type: 'errored', errorType: 'invalid_request_error', message: 'bad' },
      { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } } },
    ],
    [{ type: 'canceled', message: 'canceled' }, { type: 'canceled' }],
    [{ type: 'expired', message: 'expired: x' }, { type: 'expired' }],
  ];
  for (const [outcome, result] of lines) {
    test(`${outcome.type} line`, () =>
      assert.deepEqual(JSON.parse(resultLineOf('id-1', outcome)), { custom_id: 'id-1', result }));
  }
  test('a succeeded line carries the message text byte for byte', () => {
    const message = '{"b":1.0,"a":"é"}';
    assert.equal(
      resultLineOf('x', { type: 'succeeded', messageJson: message }),
      `{"custom_id":"x","result":{"type":"succeeded","message":${message}}}`,
    );
  });
  const counts = { processing: 1, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  const facts = { id: 'msgbatch_1', createdAt: Date.UTC(2026, 0, 1), endedAt: null, cancelRequestedAt: null, counts };
  test('in progress, canceling, ended (with its results url)', () => {
    assert.equal(messageBatchOf(facts, 'https://b').processing_status, 'in_progress');
    const canceling = messageBatchOf({ ...facts, cancelRequestedAt: Date.UTC(2026, 0, 1, 1) }, 'https://b');
    assert.equal(canceling.processing_status, 'canceling');
    assert.equal(canceling.cancel_initiated_at, '2026-01-01T01:00:00.000Z');
    assert.equal(canceling.results_url, null);
    const ended = messageBatchOf({ ...facts, endedAt: Date.UTC(2026, 0, 1, 2) }, 'https://b');
    assert.deepEqual(ended, {
      id: 'msgbatch_1',
      type: 'message_batch',
      processing_status: 'ended',
      request_counts: counts,
      ended_at: '2026-01-01T02:00:00.000Z',
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: '2026-01-02T00:00:00.000Z',
      cancel_initiated_at: null,
      archived_at: null,
      results_url: 'https://b/v1/messages/batches/msgbatch_1/results',
    });
  });
});

describe('barge → OpenAI: chat completions, output and error lines, the Batch', () => {
  const message = (fields: Record<string, unknown>) =>
    JSON.stringify({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [
        { type: 'text', text: 'Hel' },
        { type: 'thinking', thinking: 'hidden', signature: 's' },
        { type: 'text', text: 'lo' },
      ],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 5, cache_creation_input_tokens: 1 },
      ...fields,
    });
  const finishes: [string, string][] = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
  ];
  for (const [stop, finish] of finishes) {
    test(`stop_reason ${stop} → finish_reason ${finish}`, () => {
      assert.equal(chatCompletionOf(message({ stop_reason: stop }), 0).choices[0]?.finish_reason, finish);
    });
  }
  test('a message into a chat.completion: text joined, prompt tokens with the cache', () => {
    assert.deepEqual(chatCompletionOf(message({}), 1_800_000_000_999), {
      id: 'msg_1',
      object: 'chat.completion',
      created: 1_800_000_000,
      model: 'claude-x',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 16, completion_tokens: 4, total_tokens: 20 },
    });
  });
  test('a message without text (only a tool call, or empty) has content "", never null', () => {
    for (const content of [[], [{ type: 'tool_use', id: 't', name: 'f', input: {} }], undefined]) {
      const completion = chatCompletionOf(
        JSON.stringify({ id: 'msg_2', model: 'm', content, stop_reason: 'end_turn' }),
        0,
      );
      assert.equal(completion.choices[0]?.message.content, '');
    }
  });
  const request = { cargoId: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c', customId: 'q', resultAt: 0 };
  test('a succeeded request is an output line', () => {
    const { file, line } = outputLineOf(request, { type: 'succeeded', messageJson: message({}) });
    assert.equal(file, 'output');
    const parsed = JSON.parse(line);
    assert.deepEqual(Object.keys(parsed), ['id', 'custom_id', 'response', 'error']);
    assert.equal(parsed.id, 'batch_req_01jd5q3k8m9x2v4w6y8z0a1b2c');
    assert.deepEqual(
      { ...parsed.response, body: undefined },
      { status_code: 200, request_id: request.cargoId, body: undefined },
    );
    assert.equal(parsed.error, null);
  });
  const failures: [Exclude<Parameters<typeof outputLineOf>[1], { type: 'succeeded' }>, string][] = [
    [{ type: 'errored', errorType: 'rate_limit_error', message: 'slow down' }, 'rate_limit_error'],
    [{ type: 'canceled', message: 'canceled' }, 'batch_cancelled'],
    [{ type: 'expired', message: 'expired: late' }, 'batch_expired'],
  ];
  for (const [outcome, code] of failures) {
    test(`${outcome.type} is an error line with code ${code}`, () => {
      const { file, line } = outputLineOf(request, outcome);
      assert.equal(file, 'error');
      assert.deepEqual(JSON.parse(line), {
        id: 'batch_req_01jd5q3k8m9x2v4w6y8z0a1b2c',
        custom_id: 'q',
        response: null,
        error: { code, message: outcome.message },
      });
    });
  }
  const base = {
    id: 'batch_1',
    inputFileId: 'file-1',
    createdAt: 1_000_000,
    inProgressAt: 1_000_000,
    cancelRequestedAt: null,
    endedAt: null,
    failedAt: null,
    counts: { total: 2, completed: 0, failed: 0 },
    metadata: null,
    errors: null,
    outputFileId: null,
    errorFileId: null,
  };
  const statuses: [string, Partial<Parameters<typeof batchObjectOf>[0]>, string][] = [
    ['open', { state: 'open' }, 'in_progress'],
    ['open, cancel asked', { state: 'open', cancelRequestedAt: 2_000_000 }, 'cancelling'],
    ['ended', { state: 'ended', endedAt: 3_000_000 }, 'completed'],
    ['ended after a cancel', { state: 'ended', endedAt: 3_000_000, cancelRequestedAt: 2_000_000 }, 'cancelled'],
    ['failed', { state: 'failed', failedAt: 1_000_000 }, 'failed'],
  ];
  for (const [name, facts, status] of statuses) {
    test(`a batch ${name} is ${status}`, () => {
      const batch = batchObjectOf(
        { ...base, state: 'open', ...facts } as Parameters<typeof batchObjectOf>[0],
        '/v1/chat/completions',
      );
      assert.equal(batch.status, status);
      assert.equal(batch.completed_at, status === 'completed' ? 3000 : null);
      assert.equal(batch.cancelled_at, status === 'cancelled' ? 3000 : null);
      assert.equal(batch.expires_at, 1000 + 86_400);
    });
  }
});

describe("barge's errors in each API's shape", () => {
  const cases: [string, ApiError, { anthropic: [number, string]; openai: [number, string, string | null] }][] = [
    [
      'a refused key',
      errors.invalidApiKey(),
      { anthropic: [401, 'authentication_error'], openai: [401, 'invalid_request_error', 'invalid_api_key'] },
    ],
    [
      'an inactive project',
      errors.projectInactive(),
      { anthropic: [403, 'permission_error'], openai: [403, 'invalid_request_error', 'project_inactive'] },
    ],
    [
      'a rate limit',
      errors.rateLimited(3),
      { anthropic: [429, 'rate_limit_error'], openai: [429, 'requests', 'rate_limit_exceeded'] },
    ],
    [
      'a spend budget',
      errors.budgetExceeded({ period: 'month', budgetUsd: 1, spentUsd: 1, reservedUsd: 0 }),
      { anthropic: [402, 'billing_error'], openai: [429, 'insufficient_quota', 'insufficient_quota'] },
    ],
    [
      'a busy service',
      errors.serverBusy(1),
      { anthropic: [529, 'overloaded_error'], openai: [503, 'server_error', 'server_busy'] },
    ],
    [
      'a bug',
      errors.internalError('r-1'),
      { anthropic: [500, 'api_error'], openai: [500, 'server_error', 'internal_error'] },
    ],
    [
      'a batch not found',
      compatErrors.batchNotFound('batch_x'),
      { anthropic: [404, 'not_found_error'], openai: [404, 'invalid_request_error', 'batch_not_found'] },
    ],
    [
      'a body too large',
      compatErrors.tooLarge('too big'),
      { anthropic: [413, 'request_too_large'], openai: [413, 'invalid_request_error', 'batch_body_too_large'] },
    ],
  ];
  for (const [name, error, expected] of cases) {
    test(name, () => {
      const a = anthropicError(error);
      assert.equal(a.statusCode, expected.anthropic[0]);
      assert.deepEqual(Object.keys(a.body as object), ['type', 'error']);
      assert.equal((a.body as { type: string }).type, 'error');
      assert.equal((a.body as { error: { type: string } }).error.type, expected.anthropic[1]);
      const o = openAIError(error);
      const body = (o.body as { error: { message: string; type: string; param: unknown; code: unknown } }).error;
      assert.deepEqual([o.statusCode, body.type, body.code], expected.openai);
      assert.deepEqual(Object.keys(body), ['message', 'type', 'param', 'code']);
      assert.equal(body.message, (a.body as { error: { message: string } }).error.message);
    });
  }
  test('Retry-After goes along; a 500 names its request id; a 400 names its field', () => {
    assert.equal(anthropicError(errors.rateLimited(7)).headers['retry-after'], '7');
    assert.equal(openAIError(errors.rateLimited(7)).headers['retry-after'], '7');
    assert.match(
      (anthropicError(errors.internalError('r-9')).body as { error: { message: string } }).error.message,
      /r-9/,
    );
    const invalid = openAIError(errors.invalidBody([{ path: '/metadata/k', message: 'too long' }]));
    assert.equal((invalid.body as { error: { param: string } }).error.param, 'metadata.k');
  });
});

describe('reading bodies as they arrive', () => {
  const read = (text: string, limit = 1000, slices = 3) => {
    const reader = new RequestsReader(limit);
    const buffer = Buffer.from(text);
    const out = [];
    const step = Math.ceil(buffer.length / slices);
    for (let at = 0; at < buffer.length; at += step) out.push(...reader.write(buffer.subarray(at, at + step)));
    out.push(...reader.end());
    return out;
  };
  test('the requests of a create body, one by one, in order', () => {
    assert.deepEqual(read('{"requests": [{"custom_id": "a"}, {"custom_id": "é", "params": [1, {"x": 2}]}]}'), [
      { index: 0, value: { custom_id: 'a' } },
      { index: 1, value: { custom_id: 'é', params: [1, { x: 2 }] } },
    ]);
  });
  const bad: [string, string, 400 | 413][] = [
    ['[]', 'must be a JSON object', 400],
    ['{"extra": 1, "requests": []}', 'extra: Extra inputs are not permitted', 400],
    ['{"requests": {"a": 1}}', 'requests: Input should be a valid list', 400],
    ['{}', 'requests: Field required', 400],
    ['{"requests": [{"a": 1}', 'it ended early', 400],
    ['{"requests": [{"a": 1}}', 'not valid JSON', 400],
    [
      `{"requests": [{"a": 1}, {"big": "${'x'.repeat(5000)}"}]}`,
      'requests.1: larger than the limit of 1000 bytes',
      413,
    ],
  ];
  for (const [text, message, status] of bad) {
    test(`refused: ${text.slice(0, 40)}`, () => {
      assert.throws(
        () => read(text, 1000, 40),
        (err: unknown) =>
          (err as { status: number }).status === status && String((err as Error).message).includes(message),
      );
    });
  }
  test('JSONL lines across chunk ends, CRLF and a multi-byte character cut in two', async () => {
    const bytes = Buffer.from('{"a":1}\r\n{"é":2}\n\nlast');
    const chunks = async function* () {
      for (let at = 0; at < bytes.length; at += 3) yield bytes.subarray(at, at + 3);
    };
    const lines = [];
    for await (const l of linesOfChunks(chunks(), 100)) lines.push(l);
    assert.deepEqual(lines, [{ text: '{"a":1}' }, { text: '{"é":2}' }, { text: '' }, { text: 'last' }]);
  });
  test('a line over the cap is reported by its length and not kept; the lines after it are read', async () => {
    const bytes = Buffer.from(`{"a":1}\n${'x'.repeat(50)}\n{"b":2}`);
    const chunks = async function* () {
      for (let at = 0; at < bytes.length; at += 4) yield bytes.subarray(at, at + 4);
    };
    const lines = [];
    for await (const l of linesOfChunks(chunks(), 20)) lines.push(l);
    assert.deepEqual(lines, [{ text: '{"a":1}' }, { tooLong: 50 }, { text: '{"b":2}' }]);
  });
  test('a line of 100 KB in chunks of one byte is split in linear time', async () => {
    const bytes = Buffer.from(`${'q'.repeat(100_000)}\nend`);
    const chunks = async function* () {
      for (let at = 0; at < bytes.length; at++) yield bytes.subarray(at, at + 1);
    };
    const started = Date.now();
    const lines = [];
    for await (const l of linesOfChunks(chunks(), 2 * 1024 * 1024)) lines.push(l);
    assert.deepEqual(
      lines.map((l) => ('text' in l ? l.text.length : l)),
      [100_000, 3],
    );
    assert.ok(Date.now() - started < 5000, `it took ${Date.now() - started} ms`);
  });
  test('one line of 64 MiB in 64 KiB chunks is split in linear time', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'y');
    const chunks = async function* () {
      for (let i = 0; i < 1024; i++) yield chunk;
      yield Buffer.from('\nz');
    };
    const started = Date.now();
    const lines = [];
    for await (const l of linesOfChunks(chunks(), 1024 * 1024)) lines.push(l);
    assert.deepEqual(lines, [{ tooLong: 64 * 1024 * 1024 }, { text: 'z' }]);
    assert.ok(Date.now() - started < 2000, `it took ${Date.now() - started} ms`);
  });
});

describe('the links handed out', () => {
  test('start with BARGE_PUBLIC_BASE_URL when it is set, else with the scheme and Host of the request', () => {
    const request = { protocol: 'http', host: '10.0.0.7:8080' } as never;
    assert.equal(loadConfig({}).explicitPublicBaseUrl, null);
    const explicit = loadConfig({ BARGE_PUBLIC_BASE_URL: 'https://batch.example.com/barge/' }).explicitPublicBaseUrl;
    assert.equal(explicit, 'https://batch.example.com/barge');
    assert.equal(publicBaseOf(request, { explicitPublicBaseUrl: explicit }), 'https://batch.example.com/barge');
    assert.equal(publicBaseOf(request, { explicitPublicBaseUrl: null }), 'http://10.0.0.7:8080');
  });
});
