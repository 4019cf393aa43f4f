/**
 * The official SDK's create parameters fit barge's accepted params (decisions.md, "The full request
 * surface"): a `MessageCreateParamsNonStreaming` of `@anthropic-ai/sdk`, made of every listed field
 * and block, is assignable to `params` and, less `model`, to a record's `modelInput`. Checked by
 * `npm run typecheck`; the run adds that the same value is accepted over the API. (The pinned SDK
 * types no `temperature`, `top_p` or `top_k`: its default API version refuses them.)
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type Anthropic from '@anthropic-ai/sdk';
import type { ModelInput } from '../../src/domain/request-surface.js';
import type { LoadCargoParams } from '../../src/http/routes/load-cargo.js';
import { createProjectWithKey, startTestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { PDF, PNG } from '../helpers/request-surface.js';

const CITY_SCHEMA = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };

const sdkParams = {
  model: 'svc-mock',
  max_tokens: 4096,
  system: [{ type: 'text', text: 'You are a geographer.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  stop_sequences: ['END'],
  tools: [
    {
      name: 'find_city',
      description: 'Finds a city.',
      input_schema: CITY_SCHEMA,
      strict: true,
      cache_control: { type: 'ephemeral' },
    },
  ],
  tool_choice: { type: 'tool', name: 'find_city', disable_parallel_tool_use: true },
  thinking: { type: 'enabled', budget_tokens: 1024 },
  output_config: { effort: 'high', format: { type: 'json_schema', schema: CITY_SCHEMA } },
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: PDF },
          title: 'atlas.pdf',
          context: 'An atlas.',
          citations: { enabled: true },
        },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Paris is in France.' } },
        { type: 'document', source: { type: 'url', url: 'https://example.com/atlas.pdf' } },
        { type: 'text', text: 'Find Paris.', cache_control: { type: 'ephemeral', ttl: '5m' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Look it up.', signature: 'c2ln' },
        { type: 'redacted_thinking', data: 'b3BhcXVl' },
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_01', name: 'find_city', input: { city: 'Paris' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01',
          content: [
            { type: 'text', text: 'Paris, FR' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
          is_error: false,
        },
        { type: 'tool_result', tool_use_id: 'toolu_01', content: 'again' },
      ],
    },
  ],
} satisfies Anthropic.MessageCreateParamsNonStreaming;

// The compile-time checks: the SDK-typed value is barge's params, and a record's input less model.
const accepted: LoadCargoParams = sdkParams;
const { model: _model, ...modelInput } = sdkParams;
const record: ModelInput = modelInput;
// A field outside the list is not part of the accepted type.
// @ts-expect-error `container` is not a listed field
const refused: LoadCargoParams = { model: 'svc-mock', container: 'c' };

const backend = (await backends())[0];
assert.ok(backend);
const db = await backend.create();
const app = await startTestApp(db.database);
after(async () => {
  await app.close();
  await db.drop();
});

test('the SDK-typed params of every listed field are accepted over the API, as params and as a record', async () => {
  const { key } = await createProjectWithKey(db.database);
  for (const body of [
    { params: accepted },
    { params: { model: 'svc-mock' }, records: [{ recordId: 'r', modelInput: record }] },
  ]) {
    const res = await app.request('POST', '/cargo/load', { key, body });
    assert.equal(res.status, 200, res.text);
  }
  const res = await app.request('POST', '/cargo/load', { key, body: { params: refused } });
  assert.equal(res.status, 400);
});
