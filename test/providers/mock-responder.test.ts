/** svc-mock's model: deterministic messages, token counts, max_tokens and stop sequences, and its trigger phrases. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelContentBlock } from '../../src/domain/model-message.js';
import type { ModelInput } from '../../src/domain/request-surface.js';
import { mockRespond } from '../../src/providers/mock/responder.js';

const input = (content: string, extra: Partial<ModelInput> = {}): string =>
  JSON.stringify({ max_tokens: 1024, messages: [{ role: 'user', content }], ...extra } satisfies ModelInput);

/** The message of a success; these inputs have no tools, so its content is text. */
function message(outcome: ReturnType<typeof mockRespond>) {
  assert.ok(outcome.success, 'expected a success');
  return outcome.response as typeof outcome.response & { content: { type: 'text'; text: string }[] };
}

/** The text of a message whose content is one text block. */
function textOf(response: { content: ModelContentBlock[] }): string {
  const [block] = response.content;
  assert.equal(block?.type, 'text');
  return block.text;
}

test('the same input gives the same message; another input another one', () => {
  const a = mockRespond('svc-mock', input('hello'));
  assert.deepEqual(a, mockRespond('svc-mock', input('hello')));
  const b = message(mockRespond('svc-mock', input('hello!')));
  assert.notEqual(message(a).id, b.id);
});

test('input tokens grow with the prompt, system prompt included', () => {
  const short = message(mockRespond('svc-mock', input('hi'))).usage.input_tokens;
  const long = message(mockRespond('svc-mock', input('hi '.repeat(200)))).usage.input_tokens;
  const withSystem = message(mockRespond('svc-mock', input('hi', { system: 'be brief '.repeat(20) }))).usage
    .input_tokens;
  assert.ok(long > short && withSystem > short);
});

test('max_tokens truncates the text and says so', () => {
  const full = message(mockRespond('svc-mock', input('count the words in this reply')));
  assert.equal(full.stop_reason, 'end_turn');
  assert.ok(full.usage.output_tokens > 5);
  const cut = message(mockRespond('svc-mock', input('count the words in this reply', { max_tokens: 5 })));
  assert.equal(cut.stop_reason, 'max_tokens');
  assert.equal(cut.usage.output_tokens, 5);
  assert.equal(textOf(cut).split(' ').length, 5);
  assert.ok(textOf(full).startsWith(textOf(cut)));
});

test('output tokens are the words of the text, however the prompt is spaced or cut', () => {
  const prompts = [
    '',
    ' ',
    'one',
    'two words',
    '  lead and trail  ',
    'tab\tand\nnewline',
    'a  b   c',
    'x '.repeat(300),
  ];
  for (const prompt of prompts) {
    for (const extra of [{}, { max_tokens: 7 }, { stop_sequences: ['reply'] }, { stop_sequences: ['a'] }]) {
      const res = message(mockRespond('svc-mock', input(prompt, extra)));
      const text = textOf(res);
      assert.equal(res.usage.output_tokens, text.split(' ').filter(Boolean).length, JSON.stringify({ prompt, extra }));
      assert.ok(!/\s\s/.test(text) && !/[\t\n]/.test(text), JSON.stringify({ prompt, text }));
    }
  }
});

test('a stop sequence that occurs in the text ends it there', () => {
  const res = message(
    mockRespond('svc-mock', input('alpha beta STOPHERE gamma', { stop_sequences: ['never', 'STOPHERE'] })),
  );
  assert.equal(res.stop_reason, 'stop_sequence');
  assert.equal(res.stop_sequence, 'STOPHERE');
  assert.ok(!textOf(res).includes('STOPHERE'));
  assert.ok(textOf(res).includes('alpha beta'));
  const none = message(mockRespond('svc-mock', input('alpha beta', { stop_sequences: ['absent'] })));
  assert.equal(none.stop_reason, 'end_turn');
  assert.equal(none.stop_sequence, null);
});

test('trigger phrases in the last user message fail or expire the request', () => {
  const failed = mockRespond('svc-mock', input('x svc-mock:fail y'));
  assert.equal(failed.success, false);
  assert.ok(!failed.success && failed.kind === 'errored' && failed.error.startsWith('invalid_request_error'));
  const expired = mockRespond('svc-mock', input('svc-mock:expire'));
  assert.ok(!expired.success && expired.kind === 'expired');
  // Only the last user message counts.
  const earlier = mockRespond(
    'svc-mock',
    JSON.stringify({
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'svc-mock:fail' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'now fine' }] },
      ],
    }),
  );
  assert.equal(earlier.success, true);
});

test('stop sequences are looked for in the first 64 KiB of the reply only: small, linear work', () => {
  const long = `${'a'.repeat(70_000)} STOPHERE`;
  const far = mockRespond('svc-mock', input(long, { stop_sequences: ['STOPHERE'], max_tokens: 100 }));
  assert.ok(far.success);
  assert.notEqual(far.response.stop_reason, 'stop_sequence');
  // 3 MB of prompt and 16 long sequences that almost match everywhere: once cost 36 s on the event loop.
  const started = Date.now();
  const sequences = Array.from({ length: 16 }, (_, i) => `${'a'.repeat(250)}b${i}`);
  const heavy = mockRespond('svc-mock', input('a'.repeat(3_000_000), { stop_sequences: sequences }));
  assert.ok(heavy.success);
  assert.ok(Date.now() - started < 5000, `it took ${Date.now() - started} ms`);
});
