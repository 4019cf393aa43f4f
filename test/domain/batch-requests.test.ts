/** The provider requests of a stored cargo: a single request's input byte for byte, a records cargo's by index. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestsOfCargo, storedRequestText } from '../../src/domain/batch-requests.js';
import type { ModelInput } from '../../src/domain/request-surface.js';

const id = 'crg_01jd0000000000000000000000';

test('every stored text reads back as parsing it would give: the model input of each request, serialised', () => {
  const inputs: ModelInput[] = [
    { max_tokens: 1, messages: [{ role: 'user', content: '' }] },
    { max_tokens: 9, system: 'a "quoted" }]} system', messages: [{ role: 'user', content: 'é 😀 \\ \n' }] },
    {
      max_tokens: 5,
      temperature: 0.2,
      stop_sequences: ['}]}'],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
    },
  ];
  for (const modelInput of inputs) {
    const request = storedRequestText([{ modelInput }]);
    const parsed = (JSON.parse(request) as { requests: { modelInput: unknown }[] }).requests.map((r) =>
      JSON.stringify(r.modelInput),
    );
    assert.deepEqual(
      [...requestsOfCargo({ id, request, is_records: 0 })].map((r) => r.input),
      parsed,
    );
  }
});

test("a single request's input is its model input's JSON text, byte for byte", () => {
  const modelInput = { max_tokens: 10, messages: [{ role: 'user', content: 'a "quoted" }]} text ✓' }], n: 1e21 };
  const request = JSON.stringify({ requests: [{ modelInput }] });
  assert.deepEqual(
    [...requestsOfCargo({ id, request, is_records: 0 })],
    [{ customId: id, input: JSON.stringify(modelInput) }],
  );
});

test("a records cargo gives each record's input under its index", () => {
  const inputs = [
    { max_tokens: 1, messages: [] },
    { max_tokens: 2, messages: [] },
  ];
  const request = JSON.stringify({ requests: inputs.map((modelInput, i) => ({ recordId: `r${i}`, modelInput })) });
  assert.deepEqual(
    [...requestsOfCargo({ id, request, is_records: 1 })],
    inputs.map((input, i) => ({ customId: `${id}_${i}`, input: JSON.stringify(input) })),
  );
});

test('a request text in another layout is parsed, and gives the same input', () => {
  const request = '{ "requests": [ { "modelInput": { "max_tokens": 3, "messages": [] } } ] }';
  assert.deepEqual(
    [...requestsOfCargo({ id, request, is_records: 0 })],
    [{ customId: id, input: '{"max_tokens":3,"messages":[]}' }],
  );
});
