/**
 * The full request surface through POST /cargo/load on every backend (decisions.md, "The full
 * request surface"): every accepted shape is stored as sent, in `params` and in records; every
 * refusal is a 400 naming the path; a route that cannot take a part is a 400 naming the parameter
 * and the provider. Providers are enabled by their settings only (fake keys, loopback addresses):
 * nothing calls a provider at submit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Config, loadConfig } from '../../src/config.js';
import { createProjectWithKey, startTestApp, storedCargo, type TestApp } from '../helpers/app.js';
import { assertInvalidField } from '../helpers/assertions.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { CITY_SCHEMA, fullSurfaceParams, mediaParams, PDF, PNG } from '../helpers/request-surface.js';

const ALL_PROVIDERS: Partial<Config> = (() => {
  const config = loadConfig({
    BARGE_LOG_LEVEL: 'silent',
    ANTHROPIC_API_KEY: 'sk-ant-test-0000000000',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    OPENAI_API_KEY: 'sk-test-0000000000',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    BARGE_BEDROCK_ROLE_ARN: 'arn:aws:iam::123456789012:role/barge-bedrock',
    BARGE_BEDROCK_S3_URI: 's3://barge-test/batches/',
    BARGE_AWS_BEDROCK_ENDPOINT: 'http://127.0.0.1:9',
  });
  return { providers: config.providers, models: config.models };
})();

const ANTHROPIC = 'anthropic/claude-sonnet-4-5-20250929';
const OPENAI = 'openai/gpt-4o-2024-08-06';
const BEDROCK = 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0';

const say = (text: string) => [{ role: 'user', content: text }];
const findCity = { name: 'find_city', input_schema: CITY_SCHEMA };
const marked = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
/** A JSON object (and schema) nested `depth` objects deep. */
const nested = (depth: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { type: 'object' };
  for (let i = 1; i < depth; i++) value = { type: 'object', a: value };
  return value;
};

/** What OpenAI takes of the full surface: no thinking or effort, no document url, text-only tool results. */
function openAIParams() {
  const { thinking: _thinking, output_config, messages, ...rest } = fullSurfaceParams('openai');
  return {
    ...rest,
    output_config: { format: output_config.format },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
          { type: 'text', text: 'Find Paris.' },
        ],
      },
      messages[1],
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'Paris, FR' }] },
    ],
  };
}

for (const backend of await backends()) {
  describe(`the request surface through POST /cargo/load on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let key: string;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, { config: ALL_PROVIDERS });
      key = (await createProjectWithKey(db.database)).key;
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    const load = (body: unknown) => app.request('POST', '/cargo/load', { key, body });
    const params = (model: string, extra: Record<string, unknown>) => ({ params: { model, ...extra } });
    /** Accepted, and stored exactly as sent (less `model`). */
    async function storedAsSent(model: string, sent: Record<string, unknown>) {
      const res = await load(params(model, sent));
      assert.equal(res.status, 200, res.text);
      const row = await storedCargo(db.database, res.body.cargo_id);
      assert.deepEqual(JSON.parse(row.request).requests, [{ modelInput: sent }]);
    }
    /** A 400 whose errors name `path` with a message matching `message`. */
    async function refused(body: unknown, path: string, message?: RegExp) {
      const res = await load(body);
      assertInvalidField(res, path);
      if (message) {
        const named = res.body.errors.find((e: { path: string }) => e.path === path);
        assert.match(named.message, message, JSON.stringify(res.body.errors));
      }
    }

    test('every field and block of the list is accepted and stored as sent, on svc-mock and Anthropic', async () => {
      await storedAsSent('svc-mock', fullSurfaceParams('mock'));
      await storedAsSent(ANTHROPIC, fullSurfaceParams('anthropic'));
      await storedAsSent(ANTHROPIC, {
        max_tokens: 10,
        system: [{ type: 'text', text: 'plain' }],
        tools: [findCity],
        tool_choice: { type: 'none' },
        thinking: { type: 'adaptive' },
        messages: say('adaptive'),
      });
      for (const choice of [{ type: 'auto', disable_parallel_tool_use: true }, { type: 'any' }]) {
        await storedAsSent(ANTHROPIC, { max_tokens: 10, tools: [findCity], tool_choice: choice, messages: say('x') });
      }
      await storedAsSent(ANTHROPIC, { max_tokens: 10, thinking: { type: 'disabled' }, messages: say('off') });
    });

    test('OpenAI takes what it can translate; Bedrock takes system blocks, cache marks, base64 and text media, thinking', async () => {
      await storedAsSent(OPENAI, openAIParams());
      await storedAsSent(BEDROCK, mediaParams('bedrock'));
      await storedAsSent(OPENAI, { max_tokens: 10, thinking: { type: 'disabled' }, messages: say('no thinking') });
    });

    test('records take the same surface: a record may name a shared tool, and its own settings are judged with the shared ones', async () => {
      const res = await load({
        params: { model: 'svc-mock', max_tokens: 2048, tools: [findCity], system: [marked('shared')] },
        records: [
          { recordId: 'a', modelInput: { tool_choice: { type: 'tool', name: 'find_city' }, messages: say('a') } },
          { recordId: 'b', modelInput: { thinking: { type: 'enabled', budget_tokens: 1024 }, messages: say('b') } },
        ],
      });
      assert.equal(res.status, 200, res.text);
      const row = await storedCargo(db.database, res.body.cargo_id);
      const stored = JSON.parse(row.request).requests;
      assert.deepEqual(stored[0].modelInput.tools, [findCity]);
      assert.deepEqual(stored[0].modelInput.tool_choice, { type: 'tool', name: 'find_city' });

      const base = { model: 'svc-mock', tools: [findCity] };
      const record = (modelInput: Record<string, unknown>) => ({
        params: base,
        records: [{ recordId: 'r', modelInput }],
      });
      await refused(
        record({ tool_choice: { type: 'tool', name: 'other' }, messages: say('r') }),
        '/records/0/modelInput/tool_choice/name',
      );
      await refused(
        record({ max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: say('r') }),
        '/records/0/modelInput/thinking/budget_tokens',
      );
      await refused(
        {
          params: { ...base, system: [marked('1'), marked('2'), marked('3')] },
          records: [
            { recordId: 'r', modelInput: { messages: [{ role: 'user', content: [marked('4'), marked('5')] }] } },
          ],
        },
        '/records/0/modelInput/messages/0/content/1/cache_control',
        /past the 4/,
      );
      await refused(
        { params: base, records: [{ recordId: 'r', modelInput: { messages: say('r'), cache_control: {} } }] },
        '/records/0/modelInput/cache_control',
      );
    });

    test('tools: server tools are refused by name; names follow the pattern and are unique; the schema is an object, bounded', async () => {
      const withTools = (tools: unknown[], extra: Record<string, unknown> = {}) =>
        params('svc-mock', { tools, messages: say('t'), ...extra });
      await refused(
        withTools([findCity, { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }]),
        '/params/tools/1',
        /server tool 'web_search' \(web_search_20250305\)/,
      );
      await refused(withTools([{ ...findCity, name: 'find city' }]), '/params/tools/0/name');
      await refused(withTools([{ ...findCity, name: 'x'.repeat(129) }]), '/params/tools/0/name');
      await refused(withTools([findCity, { ...findCity }]), '/params/tools/1/name', /duplicates/);
      await refused(withTools([{ name: 'a', input_schema: { type: 'string' } }]), '/params/tools/0/input_schema/type');
      await refused(withTools([{ name: 'a' }]), '/params/tools/0/input_schema');
      await refused(withTools([{ ...findCity, input_examples: [] }]), '/params/tools/0/input_examples');
      await refused(withTools([{ name: 'a', input_schema: nested(33) }]), '/params/tools/0/input_schema', /32 levels/);
      const res = await load(withTools([{ name: 'a', input_schema: nested(32) }]));
      assert.equal(res.status, 200, res.text);
      const many = Array.from({ length: 129 }, (_, i) => ({ name: `t${i}`, input_schema: { type: 'object' } }));
      await refused(withTools(many), '/params/tools');
      await refused(withTools([findCity], { tool_choice: { type: 'tool', name: 'nope' } }), '/params/tool_choice/name');
      await refused(params('svc-mock', { tool_choice: { type: 'any' }, messages: say('t') }), '/params/tool_choice');
      await refused(
        withTools([findCity], { tool_choice: { type: 'none', disable_parallel_tool_use: true } }),
        '/params/tool_choice/disable_parallel_tool_use',
      );
      await refused(withTools([findCity], { tool_choice: { type: 'some' } }), '/params/tool_choice/type');
    });

    test('thinking: a budget of at least 1,024, below max_tokens (the default 1024 included); output_config shapes', async () => {
      const thinking = (budget: number, extra: Record<string, unknown> = {}) =>
        params('svc-mock', { thinking: { type: 'enabled', budget_tokens: budget }, messages: say('t'), ...extra });
      await refused(thinking(1023, { max_tokens: 4096 }), '/params/thinking/budget_tokens');
      await refused(
        thinking(4096, { max_tokens: 4096 }),
        '/params/thinking/budget_tokens',
        /below max_tokens \(4096\)/,
      );
      await refused(thinking(1024), '/params/thinking/budget_tokens', /below max_tokens \(1024\)/);
      await refused(
        params('svc-mock', { thinking: { type: 'enabled' }, messages: say('t') }),
        '/params/thinking/budget_tokens',
      );
      await refused(
        params('svc-mock', { thinking: { type: 'adaptive', budget_tokens: 2000 }, messages: say('t') }),
        '/params/thinking/budget_tokens',
      );
      await refused(
        params('svc-mock', { output_config: { effort: 'extreme' }, messages: say('t') }),
        '/params/output_config/effort',
      );
      await refused(
        params('svc-mock', { output_config: { format: { type: 'json', schema: CITY_SCHEMA } }, messages: say('t') }),
        '/params/output_config/format/type',
      );
      await refused(
        params('svc-mock', {
          output_config: { format: { type: 'json_schema', schema: nested(40) } },
          messages: say('t'),
        }),
        '/params/output_config/format/schema',
      );
    });

    test('blocks: base64 data, media types, sources, which turn holds which block, cache_control, system blocks', async () => {
      const user = (...content: unknown[]) => params('svc-mock', { messages: [{ role: 'user', content }] });
      const at = '/params/messages/0/content/0';
      const image = (source: Record<string, unknown>) => user({ type: 'image', source });
      await refused(
        image({ type: 'base64', media_type: 'image/png', data: 'not base64!' }),
        `${at}/source/data`,
        /base64/,
      );
      await refused(image({ type: 'base64', media_type: 'image/png', data: 'abc' }), `${at}/source/data`);
      await refused(image({ type: 'base64', media_type: 'image/tiff', data: PNG }), `${at}/source/media_type`);
      await refused(image({ type: 'file', file_id: 'file_1' }), `${at}/source/type`);
      await refused(image({ type: 'url' }), `${at}/source/url`);
      const doc = (source: Record<string, unknown>, extra = {}) => user({ type: 'document', source, ...extra });
      await refused(doc({ type: 'base64', media_type: 'image/png', data: PDF }), `${at}/source/media_type`);
      await refused(doc({ type: 'base64', media_type: 'application/pdf', data: '%PDF' }), `${at}/source/data`);
      await refused(doc({ type: 'text', media_type: 'text/html', data: 'x' }), `${at}/source/media_type`);
      await refused(doc({ type: 'content', content: [] }), `${at}/source/type`);
      await refused(
        doc({ type: 'url', url: 'https://x' }, { citations: { enabled: 'yes' } }),
        `${at}/citations/enabled`,
      );
      await refused(user({ type: 'text', text: 'x', citations: [] }), `${at}/citations`);
      await refused(user({ type: 'tool_use', id: 't', name: 'n', input: {} }), `${at}/type`, /assistant turns/);
      await refused(user({ type: 'thinking', thinking: 't', signature: 's' }), `${at}/type`, /assistant turns/);
      await refused(
        params('svc-mock', {
          messages: [...say('q'), { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }],
        }),
        '/params/messages/1/content/0/type',
        /user turns/,
      );
      await refused(
        params('svc-mock', {
          messages: [
            ...say('q'),
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: nested(33) }] },
          ],
        }),
        '/params/messages/1/content/0/input',
      );
      await refused(
        user({ type: 'tool_result', tool_use_id: 't', content: [{ type: 'document', source: {} }] }),
        `${at}/content/0/type`,
      );
      await refused(
        user({ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '10m' } }),
        `${at}/cache_control/ttl`,
      );
      await refused(
        user({ type: 'text', text: 'x', cache_control: { type: 'persistent' } }),
        `${at}/cache_control/type`,
      );
      await refused(
        params('svc-mock', {
          system: [{ type: 'image', source: { type: 'url', url: 'https://x' } }],
          messages: say('s'),
        }),
        '/params/system/0/type',
      );
      await refused(
        params('svc-mock', {
          tools: [{ ...findCity, cache_control: { type: 'ephemeral' } }],
          system: [marked('1'), marked('2')],
          messages: [{ role: 'user', content: [marked('3'), marked('4')] }],
        }),
        '/params/messages/0/content/1/cache_control',
        /past the 4 a request may have/,
      );
    });

    test('/openapi.json documents the surface, and each example body of POST /cargo/load is accepted', async () => {
      const doc = (await app.request('GET', '/openapi.json')).body;
      const { schema: body, examples } = doc.paths['/cargo/load'].post.requestBody.content['application/json'];
      for (const field of ['system', 'tools', 'tool_choice', 'thinking', 'output_config']) {
        assert.ok(
          body.properties.params.properties[field]?.description ?? body.properties.params.properties[field],
          field,
        );
      }
      const blocks = JSON.stringify(body.properties.params.properties.messages);
      for (const type of ['image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']) {
        assert.ok(blocks.includes(`"enum":["${type}"]`), `the ${type} block is documented`);
      }
      const bodies = Object.values(examples) as { value: unknown }[];
      assert.ok(bodies.length >= 3);
      for (const { value } of bodies) {
        const res = await load(value);
        assert.equal(res.status, 200, res.text);
      }
    });

    test('each route refuses, at submit, the parts it cannot take, naming the parameter and the provider', async () => {
      const bedrockRefuses: [Record<string, unknown>, string][] = [
        [{ tools: [findCity], messages: say('b') }, '/params/tools'],
        [{ tool_choice: { type: 'auto' }, messages: say('b') }, '/params/tool_choice'],
        [
          { output_config: { format: { type: 'json_schema', schema: CITY_SCHEMA } }, messages: say('b') },
          '/params/output_config/format',
        ],
        [
          {
            messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }] }],
          },
          '/params/messages/0/content/0/source',
        ],
        [
          {
            messages: [
              { role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } }] },
            ],
          },
          '/params/messages/0/content/0/source',
        ],
        [
          {
            messages: [
              ...say('q'),
              { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] },
            ],
          },
          '/params/messages/1/content/0',
        ],
        [
          { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] }] },
          '/params/messages/0/content/0',
        ],
      ];
      for (const [extra, path] of bedrockRefuses) await refused(params(BEDROCK, extra), path, /the bedrock route/);

      const openAIRefuses: [Record<string, unknown>, string][] = [
        [
          { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: say('o') },
          '/params/thinking',
        ],
        [{ thinking: { type: 'adaptive' }, messages: say('o') }, '/params/thinking'],
        [{ output_config: { effort: 'low' }, messages: say('o') }, '/params/output_config/effort'],
        [
          {
            messages: [
              { role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } }] },
            ],
          },
          '/params/messages/0/content/0/source',
        ],
        [
          {
            messages: [
              {
                role: 'user',
                content: [
                  {
                    type: 'tool_result',
                    tool_use_id: 't',
                    content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }],
                  },
                ],
              },
            ],
          },
          '/params/messages/0/content/0/content/0',
        ],
        [
          {
            messages: [
              ...say('q'),
              { role: 'assistant', content: [{ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }] },
            ],
          },
          '/params/messages/1/content/0',
        ],
      ];
      for (const [extra, path] of openAIRefuses) await refused(params(OPENAI, extra), path, /the openai route/);
      // A record's part is named at the record.
      await refused(
        {
          params: { model: BEDROCK },
          records: [{ recordId: 'r', modelInput: { tools: [findCity], messages: say('r') } }],
        },
        '/records/0/modelInput/tools',
        /the bedrock route/,
      );
    });
  });
}
