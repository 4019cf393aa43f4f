/** The provider requests of a stored cargo: a single request's input byte for byte, a records cargo's by index. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestsOfCargo } from '../../src/domain/batch-requests.js';

const id = 'crg_01jd0000000000000000000000';

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
