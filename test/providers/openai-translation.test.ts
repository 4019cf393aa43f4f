/**
 * The OpenAI adapter's pure parts: request translation (Messages-API input → chat-completions
 * input line), response translation (chat completion → model message), result lines of both
 * files in every shape (field-notes.md §3.2), and incremental line splitting of a download.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linesOf } from '../../src/providers/jsonl-lines.js';
import { inputFileChunks } from '../../src/providers/openai/input-file.js';
import { resultOfLine } from '../../src/providers/openai/result-lines.js';
import { chatCompletionBody, inputLine } from '../../src/providers/openai/translate-request.js';
import { modelMessageOf, stopReasonOf } from '../../src/providers/openai/translate-response.js';
import { ProviderError } from '../../src/providers/provider.js';

test('system becomes a leading system message; max_tokens, stop_sequences renamed; sampling as given', () => {
  const body = chatCompletionBody('gpt-4o-mini', {
    system: 'Be brief.',
    max_tokens: 300,
    temperature: 0.2,
    top_p: 0.9,
    stop_sequences: ['END', '###'],
    messages: [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'user', content: 'More?' },
    ],
  });
  assert.deepEqual(body, {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'user', content: 'More?' },
    ],
    max_completion_tokens: 300,
    stop: ['END', '###'],
    temperature: 0.2,
    top_p: 0.9,
  });
});

test('text blocks stay text content parts, with nothing but type and text', () => {
  const body = chatCompletionBody('gpt-4o', {
    max_tokens: 5,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two', cache_control: { type: 'ephemeral' } } as never,
        ],
      },
    ],
  });
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    },
  ]);
  assert.equal('system' in body || 'max_tokens' in body || 'stop_sequences' in body, false);
});

test('an input line carries custom_id, POST, the chat completions url and the body with the model', () => {
  const input = JSON.stringify({ max_tokens: 10, messages: [{ role: 'user', content: 'é ✓' }] });
  const line = inputLine('gpt-4.1', 'crg_01', input);
  assert.ok(!line.includes('\n'));
  assert.deepEqual(JSON.parse(line), {
    custom_id: 'crg_01',
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'gpt-4.1', messages: [{ role: 'user', content: 'é ✓' }], max_completion_tokens: 10 },
  });
});

const completion = (finish: string | null, content: string | null = 'Hello there.', extra = {}) => ({
  id: 'chatcmpl-abc',
  object: 'chat.completion',
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, ...extra }, finish_reason: finish }],
  usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
  system_fingerprint: 'fp_x',
});

test('a chat completion becomes a model message with OpenAI’s id and model', () => {
  assert.deepEqual(modelMessageOf(completion('stop')), {
    id: 'chatcmpl-abc',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: 'Hello there.' }],
    model: 'gpt-4o-mini-2024-07-18',
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, cache_read_input_tokens: 0, output_tokens: 3 },
  });
});

test('finish reasons map to stop reasons; a refusal is the text with stop_reason refusal', () => {
  assert.equal(stopReasonOf('stop'), 'end_turn');
  assert.equal(stopReasonOf('length'), 'max_tokens');
  assert.equal(stopReasonOf('content_filter'), 'refusal');
  assert.equal(stopReasonOf('tool_calls'), 'tool_use');
  assert.equal(stopReasonOf('function_call'), 'tool_use');
  assert.equal(stopReasonOf(null), 'end_turn');
  assert.equal(stopReasonOf('something_new'), 'end_turn');
  const refused = modelMessageOf(completion('stop', null, { refusal: 'I can’t help with that.' }));
  assert.equal(refused.stop_reason, 'refusal');
  assert.deepEqual(refused.content, [{ type: 'text', text: 'I can’t help with that.' }]);
  const filtered = modelMessageOf(completion('content_filter', null));
  assert.deepEqual([filtered.stop_reason, filtered.content], ['refusal', [{ type: 'text', text: '' }]]);
});

test('output and error lines in every shape become results', () => {
  const ok = resultOfLine(
    JSON.stringify({
      id: 'batch_req_1',
      custom_id: 'crg_a',
      response: { status_code: 200, request_id: 'r', body: completion('length') },
      error: null,
    }),
  );
  assert.ok(ok?.success);
  assert.equal(ok.customId, 'crg_a');
  assert.equal(ok.response.stop_reason, 'max_tokens');

  const rejected = resultOfLine(
    JSON.stringify({
      id: 'batch_req_2',
      custom_id: 'crg_b',
      response: {
        status_code: 400,
        request_id: 'r',
        body: {
          error: {
            message: 'This model’s maximum context length is 128000 tokens.',
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        },
      },
      error: null,
    }),
  );
  assert.deepEqual(rejected, {
    customId: 'crg_b',
    success: false,
    kind: 'errored',
    error: 'invalid_request_error: This model’s maximum context length is 128000 tokens.',
  });

  const codeOnly = resultOfLine(
    JSON.stringify({
      custom_id: 'crg_c',
      response: { status_code: 500, body: { error: { message: 'boom', type: null, code: 'server_error' } } },
      error: null,
    }),
  );
  assert.deepEqual(codeOnly, { customId: 'crg_c', success: false, kind: 'errored', error: 'server_error: boom' });

  const stopped = (code: string, message: string) =>
    resultOfLine(JSON.stringify({ id: 'batch_req_3', custom_id: 'crg_d', response: null, error: { code, message } }));
  assert.deepEqual(stopped('batch_expired', 'Not executed before the window expired.'), {
    customId: 'crg_d',
    success: false,
    kind: 'expired',
    error: 'expired: Not executed before the window expired.',
  });
  assert.deepEqual(stopped('batch_cancelled', 'Cancelled before it ran.'), {
    customId: 'crg_d',
    success: false,
    kind: 'canceled',
    error: 'canceled: Cancelled before it ran.',
  });
  assert.deepEqual(stopped('server_error', 'The server had an error.'), {
    customId: 'crg_d',
    success: false,
    kind: 'errored',
    error: 'server_error: The server had an error.',
  });
});

test('lines naming no request are skipped', () => {
  assert.equal(resultOfLine('not json'), null);
  assert.equal(resultOfLine('null'), null);
  assert.equal(resultOfLine(JSON.stringify({ response: null, error: { code: 'x', message: 'y' } })), null);
});

test('a download splits into lines across chunk boundaries, multi-byte characters included', async () => {
  const text = '{"a":"é✓"}\n\n{"b":2}\r\n{"c":3}';
  const bytes = Buffer.from(text);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 3) controller.enqueue(bytes.subarray(i, i + 3));
      controller.close();
    },
  });
  const lines: string[] = [];
  for await (const line of linesOf(stream)) lines.push(line);
  assert.deepEqual(lines, ['{"a":"é✓"}', '{"b":2}', '{"c":3}']);
});

test('the input file comes in chunks of whole lines and stops at the first line past the byte limit', async () => {
  let read = 0;
  const requests = (async function* () {
    for (; read < 5000; read++) {
      yield {
        customId: `crg_${String(read).padStart(4, '0')}`,
        input: JSON.stringify({ max_tokens: 1, messages: [{ role: 'user', content: 'x'.repeat(100) }] }),
      };
    }
  })();
  const lineBytes = Buffer.byteLength(
    `${JSON.stringify({ custom_id: 'crg_0000', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(100) }], max_completion_tokens: 1 } })}\n`,
  );
  const chunks: Uint8Array[] = [];
  await assert.rejects(
    (async () => {
      for await (const chunk of inputFileChunks('m', requests, 1000 * lineBytes)) chunks.push(chunk);
    })(),
    (err: unknown) => err instanceof ProviderError && err.kind === 'rejected' && /^file_too_large: /.test(err.message),
  );
  assert.equal(read, 1000, 'the 1,001st line is the first past the limit; nothing is read after it');
  assert.ok(chunks.length > 1, 'more than one chunk');
  const text = Buffer.concat(chunks).toString();
  assert.ok(text.endsWith('\n'));
  assert.ok(
    text
      .split('\n')
      .slice(0, -1)
      .every((line) => JSON.parse(line).url === '/v1/chat/completions'),
  );
});

test('tool calls become tool_use blocks after any text; arguments that are not a JSON object are kept whole', () => {
  const call = (args: string) => ({ id: 'call_1', type: 'function', function: { name: 'f', arguments: args } });
  const cases: [string, unknown][] = [
    ['{"a":1}', { a: 1 }],
    ['{"a": [1, {"b": null}]}', { a: [1, { b: null }] }],
    ['{"a": 1', { arguments: '{"a": 1' }],
    ['[1,2]', { arguments: '[1,2]' }],
    ['null', { arguments: 'null' }],
    ['"text"', { arguments: '"text"' }],
    ['', { arguments: '' }],
  ];
  for (const [args, input] of cases) {
    const message = modelMessageOf({
      choices: [{ finish_reason: 'tool_calls', message: { content: null, tool_calls: [call(args)] } }],
    });
    assert.deepEqual(message.content, [{ type: 'tool_use', id: 'call_1', name: 'f', input }], args);
    assert.equal(message.stop_reason, 'tool_use');
  }
  const both = modelMessageOf({
    choices: [
      { finish_reason: 'tool_calls', message: { content: 'Calling.', tool_calls: [call('{}'), call('{"x":2}')] } },
    ],
  });
  assert.deepEqual(both.content, [
    { type: 'text', text: 'Calling.' },
    { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
    { type: 'tool_use', id: 'call_1', name: 'f', input: { x: 2 } },
  ]);
});

test('usage: cached prompt tokens are counted apart from the input tokens', () => {
  const usage = (u: Parameters<typeof modelMessageOf>[0]['usage']) => modelMessageOf({ usage: u }).usage;
  assert.deepEqual(
    usage({ prompt_tokens: 2000, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 1536 } }),
    {
      input_tokens: 464,
      cache_read_input_tokens: 1536,
      output_tokens: 5,
    },
  );
  assert.deepEqual(usage({ prompt_tokens: 20, completion_tokens: 5, prompt_tokens_details: null }), {
    input_tokens: 20,
    cache_read_input_tokens: 0,
    output_tokens: 5,
  });
});

test('request: each tool_choice, tools, structured output, and a user turn with tool results ahead of its text', () => {
  const tools = [{ name: 'f', description: 'F.', input_schema: { type: 'object' as const }, strict: false }];
  const base = { max_tokens: 5, tools, messages: [{ role: 'user' as const, content: 'x' }] };
  const choices: [unknown, unknown, boolean?][] = [
    [{ type: 'auto' }, 'auto'],
    [{ type: 'auto', disable_parallel_tool_use: true }, 'auto', false],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
    [
      { type: 'tool', name: 'f', disable_parallel_tool_use: false },
      { type: 'function', function: { name: 'f' } },
    ],
  ];
  for (const [choice, expected, parallel] of choices) {
    const body = chatCompletionBody('gpt-4o', { ...base, tool_choice: choice as never });
    assert.deepEqual(body.tool_choice, expected);
    assert.equal(body.parallel_tool_calls, parallel);
    assert.deepEqual(body.tools, [
      { type: 'function', function: { name: 'f', description: 'F.', parameters: { type: 'object' }, strict: false } },
    ]);
  }
  const body = chatCompletionBody('gpt-4o', {
    max_tokens: 5,
    output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'before' },
          { type: 'tool_result', tool_use_id: 'a', content: 'ra' },
          { type: 'tool_result', tool_use_id: 'b' },
        ],
      },
    ],
  });
  assert.deepEqual(body.response_format, {
    type: 'json_schema',
    json_schema: { name: 'output', schema: { type: 'object' }, strict: true },
  });
  assert.deepEqual(body.messages, [
    { role: 'tool', tool_call_id: 'a', content: 'ra' },
    { role: 'tool', tool_call_id: 'b', content: '' },
    { role: 'user', content: [{ type: 'text', text: 'before' }] },
  ]);
});
