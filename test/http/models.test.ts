/**
 * Model routing, the submit-time checks of a model's parameters and GET /models, through the API
 * of services configured with no real provider, with all three, with Bedrock alone, and with an
 * operator's own catalog. Providers are enabled by their settings only (fake keys, loopback
 * addresses): nothing calls a provider at submit, and these services run no workers.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Config, loadConfig } from '../../src/config.js';
import { MOCK_PRICES } from '../../src/domain/model-catalog.js';
import { createProjectWithKey, startTestApp, storedCargo, type TestApp } from '../helpers/app.js';
import { assertErrorList, assertInvalidField } from '../helpers/assertions.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { SONNET_PRICES } from '../helpers/prices.js';

const ENV = {
  anthropic: { ANTHROPIC_API_KEY: 'sk-ant-test-0000000000', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
  openai: { OPENAI_API_KEY: 'sk-test-0000000000', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
  bedrock: {
    BARGE_BEDROCK_ROLE_ARN: 'arn:aws:iam::123456789012:role/barge-bedrock',
    BARGE_BEDROCK_S3_URI: 's3://barge-test/batches/',
    BARGE_AWS_BEDROCK_ENDPOINT: 'http://127.0.0.1:9',
  },
};
/** The config of a deployment with these settings (as `barge serve` would read them). */
const deployment = (env: Record<string, string>): Partial<Config> => {
  const config = loadConfig({ BARGE_LOG_LEVEL: 'silent', ...env });
  return { providers: config.providers, models: config.models };
};

const SHIPPED = JSON.parse(readFileSync(new URL('../../models/catalog.json', import.meta.url), 'utf8')) as {
  models: { id: string; routes: { provider: string; model: string }[] }[];
};

const ARNS = [
  'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0',
  'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6',
  'arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abcdef123456',
  'arn:aws:bedrock:us-east-1:123456789012:custom-model/anthropic.claude-3-haiku-20240307-v1:0:200k/x1y2z3',
];

const messages = [{ role: 'user', content: 'hi' }];
const body = (model: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  params: { model, messages, ...params },
  ...extra,
});
const recordsBody = (model: string, inputs: Record<string, unknown>[]) => ({
  params: { model },
  records: inputs.map((input, i) => ({ recordId: `r${i}`, modelInput: { messages, ...input } })),
});

for (const backend of await backends()) {
  describe(`models and routing on ${backend.name}`, () => {
    let db: TestDatabase;
    /** No real provider: svc-mock only. */
    let none: TestApp;
    let all: TestApp;
    let bedrockOnly: TestApp;
    /** BARGE_MODELS_FILE with one model of its own, and OpenAI enabled. */
    let custom: TestApp;
    let key: string;
    const dir = mkdtempSync(join(tmpdir(), 'barge-models-http-'));
    before(async () => {
      db = await backend.create();
      const file = join(dir, 'models.json');
      writeFileSync(
        file,
        JSON.stringify({
          models: [
            {
              id: 'house-model',
              routes: [
                { provider: 'anthropic', model: 'claude-haiku-4-5-20251001' },
                { provider: 'openai', model: 'gpt-4o-mini' },
              ],
              max_output_tokens: 100,
              prices_usd_per_mtok: { input: 1, output: 2, batch_input: 0.5, batch_output: 1 },
            },
            // Prices on an id routed to the mock provider: neither it nor svc-mock is billed.
            {
              id: 'house-mock',
              routes: [{ provider: 'mock', model: 'svc-mock' }],
              prices_usd_per_mtok: { input: 3, output: 15, batch_input: 1.5, batch_output: 7.5 },
            },
          ],
        }),
      );
      none = await startTestApp(db.database);
      all = await startTestApp(db.database, {
        config: deployment({ ...ENV.anthropic, ...ENV.openai, ...ENV.bedrock }),
      });
      bedrockOnly = await startTestApp(db.database, { config: deployment(ENV.bedrock) });
      custom = await startTestApp(db.database, { config: deployment({ ...ENV.openai, BARGE_MODELS_FILE: file }) });
      ({ key } = await createProjectWithKey(db.database));
    });
    after(async () => {
      for (const app of [none, all, bedrockOnly, custom]) await app?.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const load = (app: TestApp, payload: unknown) => app.request('POST', '/cargo/load', { key, body: payload });
    const models = async (app: TestApp) => {
      const res = await app.request('GET', '/models', { key });
      assert.equal(res.status, 200, res.text);
      return res.body.data as Record<string, any>[];
    };

    /** Loads and returns where the stored cargo was routed. */
    async function routedTo(app: TestApp, payload: unknown) {
      const res = await load(app, payload);
      assert.equal(res.status, 200, res.text);
      const row = await storedCargo(db.database, res.body.cargo_id);
      return { model: row.model, provider: row.provider, provider_model: row.provider_model, status: row.status };
    }

    /** A 400 on /params/model whose detail names the model and says what is wrong. */
    async function refusedModel(app: TestApp, model: string, what: RegExp) {
      const res = await load(app, body(model));
      assertInvalidField(res, '/params/model');
      assert.ok(res.body.detail.includes(`'${model}'`), res.body.detail);
      assert.match(res.body.detail, what);
    }

    test('GET /models needs an API key', async () => {
      const res = await all.request('GET', '/models');
      assert.equal(res.status, 401, res.text);
      assert.equal(typeof res.body.detail, 'string');
    });

    test('GET /models with no real provider: svc-mock alone, free', async () => {
      assert.deepEqual(await models(none), [
        {
          id: 'svc-mock',
          provider: 'mock',
          provider_model: 'svc-mock',
          max_output_tokens: null,
          prices_usd_per_mtok: MOCK_PRICES,
        },
      ]);
    });

    test('GET /models with every provider: svc-mock, then every shipped model by its first route', async () => {
      const data = await models(all);
      assert.deepEqual(
        data.map((m) => m.id),
        ['svc-mock', ...SHIPPED.models.map((m) => m.id)],
      );
      for (const shipped of SHIPPED.models) {
        const listed = data.find((m) => m.id === shipped.id);
        assert.equal(listed?.provider, shipped.routes[0]?.provider, shipped.id);
        assert.equal(listed?.provider_model, shipped.routes[0]?.model, shipped.id);
      }
      assert.deepEqual(
        data.find((m) => m.id === 'claude-sonnet-4-5'),
        {
          id: 'claude-sonnet-4-5',
          provider: 'anthropic',
          provider_model: 'claude-sonnet-4-5-20250929',
          max_output_tokens: 64000,
          // The shipped cache prices: writes 1.25x and 2x the input price, reads 0.1x; batch half.
          prices_usd_per_mtok: SONNET_PRICES,
        },
      );
    });

    test('GET /models with Bedrock alone: the models with a Bedrock route, by it', async () => {
      const data = await models(bedrockOnly);
      const withBedrock = SHIPPED.models.filter((m) => m.routes.some((r) => r.provider === 'bedrock'));
      assert.ok(withBedrock.length > 0 && withBedrock.length < SHIPPED.models.length);
      assert.deepEqual(
        data.map((m) => m.id),
        ['svc-mock', ...withBedrock.map((m) => m.id)],
      );
      for (const m of data.slice(1)) assert.equal(m.provider, 'bedrock', m.id);
      assert.equal(
        data.find((m) => m.id === 'claude-sonnet-4-5')?.provider_model,
        'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      );
    });

    test('a catalog id is routed to its first enabled route', async () => {
      assert.deepEqual(await routedTo(all, body('claude-sonnet-4-5')), {
        model: 'claude-sonnet-4-5',
        provider: 'anthropic',
        provider_model: 'claude-sonnet-4-5-20250929',
        status: 'pending',
      });
      assert.deepEqual(await routedTo(bedrockOnly, body('claude-sonnet-4-5')), {
        model: 'claude-sonnet-4-5',
        provider: 'bedrock',
        provider_model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
        status: 'pending',
      });
      assert.deepEqual(await routedTo(all, body('gpt-4o-mini')), {
        model: 'gpt-4o-mini',
        provider: 'openai',
        provider_model: 'gpt-4o-mini',
        status: 'pending',
      });
      assert.equal((await routedTo(none, body('svc-mock'))).provider, 'mock');
    });

    test('provider-qualified names are routed to that provider as named', async () => {
      const cases: [string, string, string][] = [
        ['anthropic/claude-3-opus-20240229', 'anthropic', 'claude-3-opus-20240229'],
        ['openai/gpt-4o-2024-08-06', 'openai', 'gpt-4o-2024-08-06'],
        ['openai/ft:gpt-4o-mini-2024-07-18:acme::abc123', 'openai', 'ft:gpt-4o-mini-2024-07-18:acme::abc123'],
        [
          'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0',
          'bedrock',
          'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
        ],
      ];
      for (const [model, provider, providerModel] of cases) {
        assert.deepEqual(await routedTo(all, body(model)), {
          model,
          provider,
          provider_model: providerModel,
          status: 'pending',
        });
      }
    });

    test('every Bedrock ARN form goes to bedrock where it is enabled, and is "not enabled" elsewhere', async () => {
      for (const arn of ARNS) {
        assert.deepEqual(await routedTo(bedrockOnly, body(arn)), {
          model: arn,
          provider: 'bedrock',
          provider_model: arn,
          status: 'pending',
        });
        await refusedModel(none, arn, /bedrock.*not enabled here/);
      }
    });

    test('a model whose provider is not enabled here: 400 naming the model and the provider', async () => {
      await refusedModel(
        none,
        'claude-sonnet-4-5',
        /anthropic or bedrock, and none of these providers is enabled here/,
      );
      await refusedModel(bedrockOnly, 'gpt-4o', /openai, and that provider is not enabled here/);
      await refusedModel(none, 'openai/gpt-4o', /openai, and that provider is not enabled here/);
      await refusedModel(bedrockOnly, 'anthropic/claude-3-opus-20240229', /anthropic.*not enabled here/);
    });

    test('an unknown model: 400 naming it as unknown', async () => {
      for (const model of ['gpt-9', 'azure/gpt-4o', 'anthropic/', 'arn:aws:bedrock:us-east-1:123456789012:agent/X1']) {
        await refusedModel(all, model, /is not a known model/);
      }
    });

    test("max_tokens above the model's max_output_tokens: 400 where it was given, shared or per record", async () => {
      assert.equal((await load(all, body('claude-sonnet-4-5', { max_tokens: 64000 }))).status, 200);
      const shared = await load(all, body('claude-sonnet-4-5', { max_tokens: 64001 }));
      assertInvalidField(shared, '/params/max_tokens');
      assert.match(shared.body.detail, /64001.*64000.*claude-sonnet-4-5/);
      const perRecord = await load(
        all,
        recordsBody('claude-sonnet-4-5', [{ max_tokens: 64000 }, { max_tokens: 64001 }]),
      );
      assertInvalidField(perRecord, '/records/1/modelInput/max_tokens');
      assert.equal(perRecord.body.errors.length, 1, perRecord.text);
      assertInvalidField(
        await load(all, {
          ...recordsBody('claude-3-5-haiku', [{}]),
          params: { model: 'claude-3-5-haiku', max_tokens: 8193 },
        }),
        '/params/max_tokens',
      );
    });

    test('openai: top_k and more than 4 stop_sequences are 400, naming the parameter', async () => {
      assertInvalidField(await load(all, body('gpt-4o', { top_k: 10 })), '/params/top_k');
      assertInvalidField(await load(all, recordsBody('gpt-4o', [{}, { top_k: 10 }])), '/records/1/modelInput/top_k');
      const five = await load(all, body('gpt-4o', { stop_sequences: ['a', 'b', 'c', 'd', 'e'] }));
      assertInvalidField(five, '/params/stop_sequences');
      assert.match(five.body.detail, /at most 4/);
      assert.equal(
        (await load(all, body('gpt-4o', { stop_sequences: ['a', 'b', 'c', 'd'], temperature: 0.5 }))).status,
        200,
      );
      // The same request is fine for a provider that takes them.
      assert.equal(
        (await load(all, body('claude-sonnet-4-5', { top_k: 10, stop_sequences: ['a', 'b', 'c', 'd', 'e'] }))).status,
        200,
      );
      assertInvalidField(await load(all, body('openai/gpt-4o-2024-08-06', { top_k: 1 })), '/params/top_k');
    });

    test("a catalog model's unsupported_params are 400, naming the parameter and the model", async () => {
      const o3 = await load(all, body('o3', { temperature: 0.2, top_p: 0.5 }));
      assertErrorList(o3);
      assert.deepEqual(
        o3.body.errors.map((e: { path: string }) => e.path),
        ['/params/temperature', '/params/top_p'],
      );
      assert.match(o3.body.detail, /'o3' does not take temperature/);
      assertInvalidField(
        await load(all, recordsBody('o3', [{ stop_sequences: ['x'] }])),
        '/records/0/modelInput/stop_sequences',
      );
      assertInvalidField(await load(all, body('claude-opus-4-7', { top_k: 5 })), '/params/top_k');
      assert.equal((await load(all, body('o3', { max_tokens: 1000 }))).status, 200);
    });

    test('BARGE_MODELS_FILE replaces the shipped catalog: its models, limits and prices, and nothing else', async () => {
      const free = MOCK_PRICES;
      assert.deepEqual(await models(custom), [
        {
          id: 'svc-mock',
          provider: 'mock',
          provider_model: 'svc-mock',
          max_output_tokens: null,
          prices_usd_per_mtok: free,
        },
        {
          id: 'house-model',
          provider: 'openai',
          provider_model: 'gpt-4o-mini',
          max_output_tokens: 100,
          // The prices used: a catalog without cache prices has them at the input price.
          prices_usd_per_mtok: {
            input: 1,
            output: 2,
            batch_input: 0.5,
            batch_output: 1,
            cache_write: 1,
            cache_write_1h: 1,
            cache_read: 1,
            batch_cache_write: 0.5,
            batch_cache_write_1h: 0.5,
            batch_cache_read: 0.5,
          },
        },
        // Listed under its own id, at the prices it is billed at: the mock provider's, none.
        {
          id: 'house-mock',
          provider: 'mock',
          provider_model: 'svc-mock',
          max_output_tokens: null,
          prices_usd_per_mtok: free,
        },
      ]);
      assert.deepEqual(await routedTo(custom, body('house-model', { max_tokens: 100 })), {
        model: 'house-model',
        provider: 'openai',
        provider_model: 'gpt-4o-mini',
        status: 'pending',
      });
      assertInvalidField(await load(custom, body('house-model', { max_tokens: 101 })), '/params/max_tokens');
      // The default max_tokens (1024) is above this model's limit: the request must say less.
      assertInvalidField(await load(custom, body('house-model')), '/params/max_tokens');
      await refusedModel(custom, 'gpt-4o', /is not a known model/);
    });

    test('the OpenAPI document describes GET /models with a response schema and an example', async () => {
      const res = await none.request('GET', '/openapi.json');
      assert.equal(res.status, 200);
      const get = res.body.paths['/models']?.get;
      assert.ok(get, 'GET /models is documented');
      assert.deepEqual(get.security, [{ apiKey: [] }]);
      const ok = get.responses['200'].content['application/json'];
      assert.deepEqual(ok.schema.required, ['data']);
      assert.ok(
        ['id', 'provider', 'provider_model', 'max_output_tokens', 'prices_usd_per_mtok'].every(
          (field) => field in ok.schema.properties.data.items.properties,
        ),
      );
      assert.ok(JSON.stringify(ok).includes('claude-sonnet-4-5-20250929'), 'an example');
    });
  });
}
