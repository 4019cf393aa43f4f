/** Model routing: where a model id goes, which models are routable, and the checks of a model's parameters. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LIMITS } from '../../src/domain/cargo-request.js';
import { type ProviderName, parseModelCatalog } from '../../src/domain/model-catalog.js';
import { checkModelParams } from '../../src/domain/model-params.js';
import { type EnabledRoutes, type ModelRoute, routableModels, routeModel } from '../../src/domain/model-routing.js';
import { checkRequestSurface } from '../../src/domain/request-rules.js';
import { checkRouteParts } from '../../src/domain/route-parts.js';

const catalog = parseModelCatalog(
  JSON.stringify({
    models: [
      {
        id: 'claude-sonnet-4-5',
        routes: [
          { provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' },
          { provider: 'bedrock', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
        ],
        max_output_tokens: 64000,
      },
      { id: 'o3', routes: [{ provider: 'openai', model: 'o3' }], unsupported_params: ['temperature', 'top_p'] },
      { id: 'tiny', routes: [{ provider: 'openai', model: 'tiny-1' }], max_output_tokens: 500 },
    ],
  }),
  'm.json',
);
const enabled = (...providers: ProviderName[]): EnabledRoutes => ({
  providers: new Set<ProviderName>(['mock', ...providers]),
  endpoints: new Set(),
});
const ALL = enabled('anthropic', 'openai', 'bedrock');

function routed(model: string, on: EnabledRoutes): ModelRoute {
  const routing = routeModel(model, catalog, on);
  assert.ok(routing.ok, `${model} should route: ${routing.ok ? '' : routing.problem.message}`);
  return routing.route;
}

function refused(model: string, on: EnabledRoutes, kind: 'unknown_model' | 'provider_not_enabled') {
  const routing = routeModel(model, catalog, on);
  assert.ok(!routing.ok, `${model} should not route`);
  assert.equal(routing.problem.kind, kind, routing.problem.message);
  assert.ok(routing.problem.message.includes(`'${model}'`), routing.problem.message);
  return routing.problem;
}

const ARNS = [
  'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0',
  'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  'arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/a1b2c3d4e5f6',
  'arn:aws:bedrock:us-west-2:123456789012:provisioned-model/abcdef123456',
  'arn:aws:bedrock:us-west-2:123456789012:custom-model/anthropic.claude-3-haiku-20240307-v1:0:200k/x1y2z3',
  'arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:inference-profile/us-gov.anthropic.claude-3-haiku-20240307-v1:0',
];

describe('routeModel', () => {
  test('svc-mock always goes to the mock provider', () => {
    assert.deepEqual(routed('svc-mock', enabled()), { provider: 'mock', providerModel: 'svc-mock', entry: null });
  });

  test('a catalog id goes to its first route whose provider is enabled', () => {
    const entry = catalog.entries[0];
    assert.deepEqual(routed('claude-sonnet-4-5', ALL), {
      provider: 'anthropic',
      providerModel: 'claude-sonnet-4-5-20250929',
      entry,
    });
    assert.deepEqual(routed('claude-sonnet-4-5', enabled('bedrock')), {
      provider: 'bedrock',
      providerModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      entry,
    });
  });

  test('a catalog id none of whose providers is enabled: not enabled, naming them', () => {
    const problem = refused('claude-sonnet-4-5', enabled('openai'), 'provider_not_enabled');
    assert.deepEqual(problem.kind === 'provider_not_enabled' && problem.providers, ['anthropic', 'bedrock']);
    assert.match(problem.message, /anthropic or bedrock/);
  });

  test('provider-qualified names go to that provider, with the catalog entry whose route they name', () => {
    assert.deepEqual(routed('anthropic/claude-sonnet-4-5-20250929', ALL), {
      provider: 'anthropic',
      providerModel: 'claude-sonnet-4-5-20250929',
      entry: catalog.entries[0],
    });
    assert.deepEqual(routed('anthropic/claude-3-opus-20240229', enabled('anthropic')), {
      provider: 'anthropic',
      providerModel: 'claude-3-opus-20240229',
      entry: null,
    });
    assert.equal(routed('openai/ft:gpt-4o-mini-2024-07-18:acme::abc123', enabled('openai')).provider, 'openai');
    assert.equal(
      routed('bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', enabled('bedrock')).entry,
      catalog.entries[0],
    );
    assert.equal(routed(`bedrock/${ARNS[1]}`, enabled('bedrock')).providerModel, ARNS[1]);
  });

  test('a qualified name whose provider is not enabled: not enabled', () => {
    refused('openai/gpt-4o', enabled('anthropic'), 'provider_not_enabled');
    refused('anthropic/claude-x', enabled('openai', 'bedrock'), 'provider_not_enabled');
    refused('bedrock/anthropic.claude-x', enabled('anthropic'), 'provider_not_enabled');
  });

  test('every Bedrock ARN form goes to bedrock when it is enabled, and is "not enabled" otherwise', () => {
    for (const arn of ARNS) {
      assert.deepEqual(routed(arn, enabled('bedrock')), { provider: 'bedrock', providerModel: arn, entry: null });
      refused(arn, enabled('anthropic', 'openai'), 'provider_not_enabled');
    }
  });

  test('anything else is unknown', () => {
    for (const model of [
      'gpt-9',
      'claude-sonnet-4-5-20250929',
      'azure/gpt-4o',
      'anthropic/',
      'openai/has space',
      'mock/svc-mock',
      'arn:aws:bedrock:us-east-1:123456789012:agent/ABC',
      'arn:aws:s3:::bucket/key',
      'SVC-MOCK',
    ]) {
      refused(model, ALL, 'unknown_model');
    }
  });
});

describe('routableModels', () => {
  test('svc-mock first, then the catalog entries some enabled provider serves, each by its first enabled route', () => {
    const summary = (on: EnabledRoutes) =>
      routableModels(catalog, on).map((m) => `${m.id}:${m.route.provider}:${m.route.providerModel}`);
    assert.deepEqual(summary(enabled()), ['svc-mock:mock:svc-mock']);
    assert.deepEqual(summary(enabled('bedrock')), [
      'svc-mock:mock:svc-mock',
      'claude-sonnet-4-5:bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    ]);
    assert.deepEqual(summary(ALL), [
      'svc-mock:mock:svc-mock',
      'claude-sonnet-4-5:anthropic:claude-sonnet-4-5-20250929',
      'o3:openai:o3',
      'tiny:openai:tiny-1',
    ]);
  });
});

describe('checkModelParams', () => {
  /** The params checks of a request on its route: the model's own (checkModelParams) and its route's (route-parts.ts). */
  const check = (model: string, params: Record<string, unknown>, records?: Record<string, unknown>[]) => {
    const route = routed(model, ALL);
    const withRecords = records ? { records: records.map((modelInput) => ({ modelInput })) } : {};
    const { parts } = checkRequestSurface({ params, ...withRecords, defaultMaxTokens: LIMITS.defaultMaxTokens });
    return [...checkModelParams({ model, route, params, ...withRecords }), ...checkRouteParts(route.provider, parts)]
      .map((p) => p.path)
      .sort();
  };

  test('max_tokens up to the model limit passes, above it is refused where it was given', () => {
    assert.deepEqual(check('claude-sonnet-4-5', { max_tokens: 64000 }), []);
    assert.deepEqual(check('claude-sonnet-4-5', { max_tokens: 64001 }), ['/params/max_tokens']);
    assert.deepEqual(check('claude-sonnet-4-5', { max_tokens: 100 }, [{ max_tokens: 64000 }, { max_tokens: 64001 }]), [
      '/records/1/modelInput/max_tokens',
    ]);
    assert.deepEqual(check('svc-mock', { max_tokens: 1_000_000 }), [], 'no catalog limit for svc-mock');
  });

  test('the default max_tokens counts when nothing is given and the model produces less', () => {
    assert.deepEqual(check('tiny', {}), ['/params/max_tokens']);
    assert.deepEqual(check('tiny', { max_tokens: 500 }), []);
    assert.deepEqual(check('tiny', {}, [{ max_tokens: 400 }]), []);
    assert.deepEqual(check('tiny', {}, [{ max_tokens: 400 }, {}]), ['/params/max_tokens']);
  });

  test('openai: no top_k and at most 4 stop sequences, in params and in records', () => {
    assert.deepEqual(check('tiny', { max_tokens: 10, top_k: 5 }), ['/params/top_k']);
    assert.deepEqual(check('tiny', { max_tokens: 10, stop_sequences: ['a', 'b', 'c', 'd'] }), []);
    assert.deepEqual(check('tiny', { max_tokens: 10 }, [{ stop_sequences: ['a', 'b', 'c', 'd', 'e'] }, { top_k: 1 }]), [
      '/records/0/modelInput/stop_sequences',
      '/records/1/modelInput/top_k',
    ]);
    assert.deepEqual(check('claude-sonnet-4-5', { top_k: 5, stop_sequences: ['a', 'b', 'c', 'd', 'e'] }), []);
  });

  test("a model's unsupported_params are refused, naming the model", () => {
    const problems = checkModelParams({
      model: 'o3',
      route: routed('o3', ALL),
      params: { temperature: 0.2, top_p: 0.9 },
    });
    assert.deepEqual(
      problems.map((p) => p.path),
      ['/params/temperature', '/params/top_p'],
    );
    assert.match(problems[0]?.message ?? '', /'o3' does not take temperature/);
    assert.deepEqual(check('o3', { system: 'be brief' }), []);
  });
});

describe('routes to an endpoint (openai-compatible)', () => {
  const withEndpoints = parseModelCatalog(
    JSON.stringify({
      endpoints: {
        'gpu-1': { base_url: 'http://10.0.0.5:8000/v1', max_concurrency: 4, timeout_ms: 60000 },
        'gpu-2': { base_url: 'http://10.0.0.6:8000/v1', max_concurrency: 4, timeout_ms: 60000 },
      },
      models: [
        {
          id: 'llama',
          routes: [
            { provider: 'openai-compatible', endpoint: 'gpu-1', model: 'meta-llama/Llama-3.1-8B-Instruct' },
            { provider: 'openai-compatible', endpoint: 'gpu-2', model: 'meta-llama/Llama-3.1-8B-Instruct' },
          ],
        },
      ],
    }),
    'm.json',
  );

  test('the first enabled endpoint takes it, stored as endpoint/model; none enabled is a provider not enabled', () => {
    const both = routeModel('llama', withEndpoints, {
      providers: new Set(['mock', 'openai-compatible']),
      endpoints: new Set(['gpu-1', 'gpu-2']),
    });
    assert.ok(both.ok);
    assert.equal(both.route.providerModel, 'gpu-1/meta-llama/Llama-3.1-8B-Instruct');
    const second = routeModel('llama', withEndpoints, {
      providers: new Set(['mock', 'openai-compatible']),
      endpoints: new Set(['gpu-2']),
    });
    assert.ok(second.ok);
    assert.equal(second.route.provider, 'openai-compatible');
    assert.equal(second.route.providerModel, 'gpu-2/meta-llama/Llama-3.1-8B-Instruct');
    const none = routeModel('llama', withEndpoints, {
      providers: new Set(['mock', 'openai-compatible']),
      endpoints: new Set(),
    });
    assert.ok(!none.ok);
    assert.equal(none.problem.kind, 'provider_not_enabled');
  });
});
