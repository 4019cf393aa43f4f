/** The request surface's rules that a schema cannot say: base64, nesting, and work linear in the body. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRequestSurface, isBase64, nestedDeeperThan } from '../../src/domain/request-rules.js';
import type { ModelSettings } from '../../src/domain/request-surface.js';

test('base64: the standard alphabet, padded to a multiple of four', () => {
  for (const ok of ['', 'QQ==', 'QUI=', 'QUJD', 'iVBORw0KGgo=', 'a+/b']) assert.ok(isBase64(ok), ok);
  for (const bad of ['Q', 'QQ=', 'QQ===', 'Q=Q=', 'QUJD\n', 'QU-_', '%PDF', 'QUJD QUJD'])
    assert.ok(!isBase64(bad), bad);
});

test('nesting: objects and arrays count, the limit itself is accepted', () => {
  const deep = (n: number) => {
    let value: unknown = 1;
    for (let i = 0; i < n; i++) value = i % 2 ? { a: value } : [value];
    return value;
  };
  assert.equal(nestedDeeperThan(deep(32), 32), false);
  assert.equal(nestedDeeperThan(deep(33), 32), true);
  assert.equal(nestedDeeperThan('text', 0), false);
  // Far past the limit: found without recursion, so no stack overflow.
  assert.equal(nestedDeeperThan(deep(100_000), 32), true);
});

test('records over shared tools: each record checked against the shared tools, a bad choice named by its path', () => {
  const schema = {
    type: 'object' as const,
    properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, { type: 'string' }])),
  };
  const params: ModelSettings = {
    tools: Array.from({ length: 128 }, (_, i) => ({ name: `t${i}`, input_schema: schema })),
  };
  const records = Array.from({ length: 10_000 }, (_, i) => ({
    modelInput: {
      tool_choice: { type: 'tool' as const, name: i === 9_999 ? 'missing' : `t${i % 128}` },
      messages: [{ role: 'user' as const, content: 'x' }],
    },
  }));
  // Linear in the body (shared tools walked once, not once per record): bench:validation measures it.
  const { problems } = checkRequestSurface({ params, records, defaultMaxTokens: 1024 });
  assert.deepEqual(
    problems.map((p) => p.path),
    ['/records/9999/modelInput/tool_choice/name'],
  );
});

test('a rule broken by a shared setting is reported once, not once per record', () => {
  const records = Array.from({ length: 3 }, () => ({
    modelInput: { messages: [{ role: 'user' as const, content: 'x' }] },
  }));
  const { problems } = checkRequestSurface({
    params: { tool_choice: { type: 'any' } },
    records,
    defaultMaxTokens: 1024,
  });
  assert.deepEqual(
    problems.map((p) => p.path),
    ['/params/tool_choice'],
  );
});
