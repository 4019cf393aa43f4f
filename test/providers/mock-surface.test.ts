/**
 * svc-mock takes the whole request surface at the provider seam (the stored request text, as the
 * pipeline hands it over): forced tools whose inputs validate against their schemas, JSON answers
 * that validate against theirs (checked with Ajv), images and documents, tool results, and the
 * prompt-cache simulation across the requests of one batch.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { ManualClock } from '../../src/domain/clock.js';
import type { ModelMessage } from '../../src/domain/model-message.js';
import { MockProvider } from '../../src/providers/mock/mock-provider.js';
import { mockRespond } from '../../src/providers/mock/responder.js';
import { schemaInstance } from '../../src/providers/mock/schema-instance.js';
import type { JobRef, RequestResult } from '../../src/providers/provider.js';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

/** Asserts `value` is valid against `schema`, naming Ajv's complaints. */
function assertValid(schema: object, value: unknown, label = ''): void {
  const validate = ajv.compile(schema);
  assert.ok(validate(value), `${label} ${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}`);
}

const respond = (input: object): ModelMessage => {
  const outcome = mockRespond('svc-mock', JSON.stringify({ max_tokens: 1024, ...input }));
  assert.ok(outcome.success, 'expected a success');
  return outcome.response;
};
const ask = (text: string) => [{ role: 'user', content: text }];

/** Schemas that exercise each rule of the instance generator. */
const SCHEMAS: Record<string, object> = {
  flat: {
    type: 'object',
    properties: {
      label: { type: 'string', enum: ['spam', 'ham'] },
      score: { type: 'number', minimum: 0.5, maximum: 1 },
      note: { type: 'string' },
    },
    required: ['label', 'score'],
    additionalProperties: false,
  },
  bounds: {
    type: 'object',
    properties: {
      count: { type: 'integer', exclusiveMinimum: 3, multipleOf: 5 },
      below: { type: 'integer', maximum: -7 },
      ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      step: { type: 'number', minimum: 0.1, multipleOf: 0.25 },
      code: { type: 'string', minLength: 3, maxLength: 5 },
      flag: { type: 'boolean' },
      nothing: { type: 'null' },
      fixed: { const: 'v1' },
      maybe: { type: ['string', 'null'], minLength: 2 },
    },
    required: ['count', 'below', 'ratio', 'step', 'code', 'flag', 'nothing', 'fixed', 'maybe'],
  },
  formats: {
    type: 'object',
    properties: Object.fromEntries(
      ['date-time', 'date', 'time', 'email', 'uri', 'uuid', 'ipv4', 'ipv6', 'hostname', 'duration'].map((f) => [
        f,
        { type: 'string', format: f },
      ]),
    ),
    required: ['date-time', 'date', 'time', 'email', 'uri', 'uuid', 'ipv4', 'ipv6', 'hostname', 'duration'],
  },
  nested: {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        minItems: 3,
        uniqueItems: true,
        items: { type: 'integer', minimum: 1 },
      },
      tags: { type: 'array', minItems: 2, uniqueItems: true, items: { type: 'string' } },
      pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], minItems: 2 },
      person: { $ref: '#/$defs/person' },
      legacy: { $ref: '#/definitions/legacy' },
      choice: { anyOf: [{ type: 'integer', minimum: 10 }, { type: 'string' }] },
      one: { oneOf: [{ type: 'string', enum: ['x'] }, { type: 'integer' }] },
      both: {
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { properties: { b: { type: 'integer', minimum: 2 } }, required: ['b'] },
        ],
      },
      extra: { type: 'object', minProperties: 1, properties: { first: { type: 'boolean' }, second: {} } },
      free: { type: 'object', required: ['anything'], additionalProperties: { type: 'integer', minimum: 4 } },
    },
    required: ['items', 'tags', 'pair', 'person', 'legacy', 'choice', 'one', 'both', 'extra', 'free'],
    $defs: {
      person: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer', minimum: 0 } },
        required: ['name'],
      },
    },
    definitions: { legacy: { type: 'string', enum: ['old'] } },
  },
  recursive: {
    type: 'object',
    properties: { node: { $ref: '#/$defs/node' } },
    required: ['node'],
    $defs: {
      node: {
        type: 'object',
        properties: { value: { type: 'integer' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
        required: ['value', 'children'],
      },
    },
  },
};

describe('svc-mock with a forced tool', () => {
  const tools = Object.entries(SCHEMAS).map(([name, input_schema]) => ({
    name,
    description: `the ${name} tool`,
    input_schema,
  }));

  test('tool_choice tool: one tool_use block for the named tool, its input valid against input_schema', () => {
    for (const tool of tools) {
      const message = respond({
        messages: ask('classify this'),
        tools,
        tool_choice: { type: 'tool', name: tool.name },
      });
      assert.equal(message.stop_reason, 'tool_use');
      assert.equal(message.content.length, 1);
      const [block] = message.content;
      assert.ok(block?.type === 'tool_use', JSON.stringify(message.content));
      assert.equal(block.name, tool.name);
      assert.match(block.id, /^toolu_mock_[0-9a-f]{24}$/);
      assertValid(tool.input_schema, block.input, tool.name);
      assert.ok(message.usage.output_tokens > 0);
    }
  });

  test('the smallest instance: required properties only, the first enum value, the lower bounds', () => {
    assert.deepEqual(schemaInstance(SCHEMAS.flat), { label: 'spam', score: 0.5 });
    assert.deepEqual(schemaInstance(SCHEMAS.bounds), {
      count: 5,
      below: -7,
      ratio: 0.5,
      step: 0.25,
      code: 'aaa',
      flag: false,
      nothing: null,
      fixed: 'v1',
      maybe: 'aa',
    });
    assert.equal(schemaInstance({ type: 'number', exclusiveMinimum: 0 }), 1);
    assert.equal(schemaInstance({ type: 'integer', exclusiveMinimum: 0 }), 1);
    assert.equal(schemaInstance({ type: 'number', minimum: 0.05, multipleOf: 0.1 }), 0.1);
    assert.equal(schemaInstance({ type: 'integer', maximum: -2.5 }), -3);
  });

  test('tool_choice any: the first tool; auto and none: a text reply', () => {
    const any = respond({ messages: ask('go'), tools, tool_choice: { type: 'any' } });
    assert.ok(any.content[0]?.type === 'tool_use' && any.content[0].name === 'flat');
    for (const type of ['auto', 'none']) {
      const reply = respond({ messages: ask('go'), tools, tool_choice: { type } });
      assert.equal(reply.content[0]?.type, 'text', type);
      assert.equal(reply.stop_reason, 'end_turn');
    }
  });

  test('the same request gives the same tool call', () => {
    const input = { messages: ask('again'), tools, tool_choice: { type: 'tool', name: 'nested' } };
    assert.deepEqual(respond(input), respond(input));
  });

  test('hostile schemas stay bounded: huge minimums, deep nesting and $ref cycles end quickly', () => {
    const deep: Record<string, unknown> = { type: 'object', required: ['x'], properties: {} };
    let at = deep;
    for (let i = 0; i < 200; i++) {
      const next = { type: 'object', required: ['x'], properties: {} };
      (at.properties as Record<string, unknown>).x = next;
      at = next;
    }
    // Each instance is capped in values, characters and depth: the size shows the work was bounded.
    for (const schema of [
      {
        type: 'array',
        minItems: 1e9,
        items: { type: 'array', minItems: 1e9, items: { type: 'string', minLength: 1e9 } },
      },
      { type: 'object', required: ['a'], properties: { a: { $ref: '#' } } },
      deep,
    ]) {
      assert.ok(JSON.stringify(schemaInstance(schema)).length < 5_000_000);
    }
  });
});

describe('svc-mock with output_config.format', () => {
  test('its text is JSON valid against the schema', () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      const message = respond({
        messages: ask('answer in JSON'),
        output_config: { format: { type: 'json_schema', schema } },
      });
      assert.equal(message.stop_reason, 'end_turn');
      const [block] = message.content;
      assert.ok(block?.type === 'text');
      assertValid(schema, JSON.parse(block.text), name);
    }
  });
});

describe('svc-mock with thinking', () => {
  const thinkingOf = (message: ModelMessage) => {
    const [first] = message.content;
    assert.ok(first?.type === 'thinking', `a thinking block first: ${JSON.stringify(message.content)}`);
    return first;
  };
  const words = (text: string) => text.split(' ').filter(Boolean).length;

  test('enabled: a thinking block within budget_tokens, then the answer; its words are output tokens', () => {
    const message = respond({
      messages: ask('why is the sky blue'),
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    const thinking = thinkingOf(message);
    assert.ok(thinking.signature.length > 0);
    const [, answer, ...more] = message.content;
    assert.ok(answer?.type === 'text' && answer.text.includes('You said: why is the sky blue'), 'then the answer');
    assert.deepEqual(more, []);
    assert.equal(message.usage.output_tokens, words(thinking.thinking) + words(answer.text));
    assert.deepEqual(
      respond({ messages: ask('why is the sky blue'), thinking: { type: 'enabled', budget_tokens: 1024 } }),
      message,
    );
  });

  test('a small budget bounds the thinking; max_tokens bounds thinking and answer together', () => {
    const small = respond({ messages: ask('why'), thinking: { type: 'enabled', budget_tokens: 3 } });
    assert.equal(words(thinkingOf(small).thinking), 3);
    const cut = respond({ messages: ask('why is the sky blue'), max_tokens: 6, thinking: { type: 'adaptive' } });
    assert.equal(cut.stop_reason, 'max_tokens');
    assert.equal(cut.usage.output_tokens, 6);
    const [, answer] = cut.content;
    assert.ok(answer?.type === 'text');
    assert.equal(words(thinkingOf(cut).thinking) + words(answer.text), 6);
  });

  test('disabled or absent: no thinking block', () => {
    for (const thinking of [undefined, { type: 'disabled' }]) {
      const message = respond({ messages: ask('hello'), ...(thinking ? { thinking } : {}) });
      assert.ok(message.content.every((b) => b.type !== 'thinking'));
    }
  });
});

describe('svc-mock reads images, documents and tool results', () => {
  const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
  const pdf = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };

  test('each image or document counts 1,000 input tokens', () => {
    const text = { type: 'text', text: 'describe' };
    const plain = respond({ messages: [{ role: 'user', content: [text] }] }).usage.input_tokens;
    const withOne = respond({ messages: [{ role: 'user', content: [image, text] }] }).usage.input_tokens;
    const withTwo = respond({ messages: [{ role: 'user', content: [image, pdf, text] }] }).usage.input_tokens;
    assert.equal(withOne - plain, 1000);
    assert.equal(withTwo - plain, 2000);
  });

  test("the echo is the last user turn's text and its tool results' text", () => {
    const message = respond({
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'river' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'the Rhine' }, image] },
            { type: 'text', text: 'summarise' },
          ],
        },
      ],
    });
    const [block] = message.content;
    assert.ok(block?.type === 'text');
    assert.ok(block.text.includes('You said: the Rhine summarise'), block.text);
  });

  test('a plain text request has no cache counts in its usage', () => {
    assert.deepEqual(Object.keys(respond({ messages: ask('plain') }).usage), ['input_tokens', 'output_tokens']);
  });
});

describe('the prompt-cache simulation in a batch', () => {
  const SHARED = 'You are a classifier of river traffic reports. '.repeat(40).trim();
  const SHARED_WORDS = SHARED.split(' ').length;
  const cachedRequest = (question: string, system = SHARED, ttl?: '1h') => ({
    max_tokens: 200,
    system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) } }],
    messages: ask(question),
  });

  /** Of these custom ids, the one answered first (the answers map keeps the order they came in). */
  const firstAnswered = (answers: Map<string, ModelMessage>, ids: string[]) =>
    [...answers.keys()].find((id) => ids.includes(id)) as string;

  /** Runs a svc-mock job of these requests, in this order, and answers by custom id (in answer order). */
  async function runBatch(inputs: object[]): Promise<Map<string, ModelMessage>> {
    const clock = new ManualClock(Date.UTC(2026, 10, 27));
    const provider = new MockProvider(clock, { latencyMs: 0 });
    const requests = inputs.map((input, i) => ({ customId: `c${i}`, input: JSON.stringify(input) }));
    const job: JobRef = {
      batchId: 'bat_1',
      jobId: 'job_1',
      model: 'svc-mock',
      requestCount: requests.length,
      submittedAt: clock.now(),
      canceledAt: null,
      state: JSON.stringify({ endsAt: clock.now() }),
      requests: async function* () {
        yield* requests;
      },
      customIds: async function* () {
        for (const r of requests) yield r.customId;
      },
    };
    const answers = new Map<string, ModelMessage>();
    const order: string[] = [];
    for await (const result of provider.results(job) as AsyncIterable<RequestResult>) {
      assert.ok(result.success);
      answers.set(result.customId, result.response);
      order.push(result.customId);
    }
    assert.notDeepEqual(order, [...order].sort(), 'results come back shuffled');
    return answers;
  }

  test('the first answer with a prefix writes it, the others read it; another prefix is written once too', async () => {
    const questions = ['first?', 'second?', 'third?', 'fourth?', 'fifth?', 'sixth?'];
    const inputs = [
      ...questions.map((q) => cachedRequest(q)),
      cachedRequest('other?', 'A different instruction entirely.'),
      cachedRequest('other again?', 'A different instruction entirely.'),
      { max_tokens: 100, messages: ask('not cached') },
    ];
    const answers = await runBatch(inputs);
    const usage = (i: number) => answers.get(`c${i}`)?.usage;
    const shared = questions.map((_, i) => i);
    const writer = Number(
      firstAnswered(
        answers,
        shared.map((i) => `c${i}`),
      ).slice(1),
    );
    assert.deepEqual(
      { ...usage(writer), input_tokens: 0, output_tokens: 0 },
      {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: SHARED_WORDS,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: SHARED_WORDS, ephemeral_1h_input_tokens: 0 },
      },
    );
    for (const i of shared.filter((i) => i !== writer)) {
      assert.equal(usage(i)?.cache_creation_input_tokens, 0, `request ${i}`);
      assert.equal(usage(i)?.cache_read_input_tokens, SHARED_WORDS, `request ${i}`);
    }
    const [otherWriter, otherReader] = firstAnswered(answers, ['c6', 'c7']) === 'c6' ? [6, 7] : [7, 6];
    assert.deepEqual(
      [usage(otherWriter)?.cache_creation_input_tokens, usage(otherReader)?.cache_read_input_tokens],
      [4, 4], // "A different instruction entirely."
    );
    assert.equal(usage(8)?.cache_creation_input_tokens, undefined);
    // input_tokens is what follows the prefix: the question's message, not the shared system prompt.
    const alone = respond({ max_tokens: 200, messages: ask(questions[writer] as string) }).usage.input_tokens;
    assert.equal(usage(writer)?.input_tokens, alone);
  });

  test('the same batch read again gives the same answers (a collection re-run after a crash)', async () => {
    const inputs = ['a?', 'b?', 'c?'].map((q) => cachedRequest(q));
    assert.deepEqual(await runBatch(inputs), await runBatch(inputs));
  });

  test('tokens up to the last 1-hour mark are 1-hour writes; marks on tools and messages count too', async () => {
    const tool = {
      name: 'route',
      description: 'pick a lock',
      input_schema: SCHEMAS.flat,
      cache_control: { type: 'ephemeral', ttl: '1h' },
    };
    const toolWords = `route pick a lock ${JSON.stringify(SCHEMAS.flat)}`.split(/\s+/).length;
    const request = (question: string) => ({
      max_tokens: 200,
      tools: [tool],
      system: [{ type: 'text', text: 'five words of system prompt' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'three shared words', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: question },
          ],
        },
      ],
    });
    const answers = await runBatch([request('one?'), request('two?')]);
    const prefix = toolWords + 5 + 3;
    const [writer, reader] = firstAnswered(answers, ['c0', 'c1']) === 'c0' ? ['c0', 'c1'] : ['c1', 'c0'];
    assert.deepEqual(answers.get(writer)?.usage.cache_creation, {
      ephemeral_5m_input_tokens: prefix - toolWords,
      ephemeral_1h_input_tokens: toolWords,
    });
    assert.equal(answers.get(writer)?.usage.cache_creation_input_tokens, prefix);
    assert.equal(answers.get(reader)?.usage.cache_read_input_tokens, prefix);
    assert.equal(answers.get(reader)?.usage.cache_creation_input_tokens, 0);
  });
});
