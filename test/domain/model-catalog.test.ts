/** The model catalog: parsing and its refusals, the shipped catalog, and the prices a cargo is costed at. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  catalogEntry,
  MOCK_PRICES,
  ModelCatalogError,
  parseModelCatalog,
  pricesForCargo,
} from '../../src/domain/model-catalog.js';
import { SONNET_PRICES } from '../helpers/prices.js';

const sonnet = {
  id: 'claude-sonnet-4-5',
  routes: [
    { provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' },
    { provider: 'bedrock', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  ],
  max_output_tokens: 64000,
  prices_usd_per_mtok: SONNET_PRICES,
};
const text = (models: unknown[]) => JSON.stringify({ models });

/** Parsing fails with a message that contains every one of `parts`. */
function assertRefused(json: string, ...parts: string[]): void {
  assert.throws(
    () => parseModelCatalog(json, 'models.json'),
    (err: unknown) => {
      assert.ok(err instanceof ModelCatalogError, String(err));
      assert.ok(err.message.startsWith('models.json: '), err.message);
      for (const part of parts) assert.ok(err.message.includes(part), `${JSON.stringify(part)} in ${err.message}`);
      return true;
    },
  );
}

describe('parseModelCatalog', () => {
  test('the example of decisions.md, read as written; optional fields may be left out', () => {
    const catalog = parseModelCatalog(
      text([sonnet, { id: 'gpt-4o', routes: [{ provider: 'openai', model: 'gpt-4o' }] }]),
      'm.json',
    );
    assert.equal(catalog.source, 'm.json');
    assert.deepEqual(catalog.entries[0], {
      id: 'claude-sonnet-4-5',
      routes: sonnet.routes,
      maxOutputTokens: 64000,
      prices: sonnet.prices_usd_per_mtok,
      unsupportedParams: [],
    });
    assert.deepEqual(catalog.entries[1], {
      id: 'gpt-4o',
      routes: [{ provider: 'openai', model: 'gpt-4o' }],
      maxOutputTokens: null,
      prices: null,
      unsupportedParams: [],
    });
  });

  test('every error names the file, the entry by index and id, and the field', () => {
    const bad = { ...sonnet, id: 'gpt-4o', routes: [{ provider: 'azure', model: 'gpt-4o' }] };
    assertRefused(
      text([sonnet, sonnet, sonnet, bad].map((m, i) => (i < 3 ? { ...m, id: `m${i}` } : m))),
      'models[3] ("gpt-4o"): routes[0].provider must be one of anthropic, openai, bedrock, mock',
    );
  });

  test('refuses what is not a catalog', () => {
    assertRefused('{"models": [', 'is not valid JSON');
    assertRefused('[]', 'must be a JSON object with a "models" array');
    assertRefused('{"model": []}', '"models" array');
    assertRefused('{"models": [], "extra": 1}', 'unknown field "extra"');
  });

  test('refuses bad entries, naming what is wrong', () => {
    const cases: [unknown, string][] = [
      ['x', 'models[0]: must be an object'],
      [{ ...sonnet, id: '' }, 'id must be'],
      [{ ...sonnet, id: 'has space' }, 'id must be'],
      [{ ...sonnet, id: 'svc-mock' }, 'svc-mock is built in'],
      [{ ...sonnet, routes: [] }, 'routes must be a non-empty array'],
      [{ ...sonnet, routes: [{ provider: 'anthropic' }] }, 'routes[0].model must be'],
      [{ ...sonnet, routes: [{ provider: 'anthropic', model: 'a b' }] }, 'routes[0].model must be'],
      [{ ...sonnet, routes: [{ provider: 'anthropic', model: 'x', weight: 1 }] }, 'routes[0]: unknown field "weight"'],
      [{ ...sonnet, max_output_tokens: 0 }, 'max_output_tokens must be an integer'],
      [{ ...sonnet, max_output_tokens: 1.5 }, 'max_output_tokens must be an integer'],
      [{ ...sonnet, max_output_tokens: '64000' }, 'max_output_tokens must be an integer'],
      [
        { ...sonnet, prices_usd_per_mtok: { input: 3, output: 15 } },
        'prices_usd_per_mtok.batch_input must be a number',
      ],
      [{ ...sonnet, prices_usd_per_mtok: { ...sonnet.prices_usd_per_mtok, output: -1 } }, 'prices_usd_per_mtok.output'],
      [{ ...sonnet, prices_usd_per_mtok: { ...sonnet.prices_usd_per_mtok, cached: 1 } }, 'unknown field "cached"'],
      [{ ...sonnet, unsupported_params: ['max_tokens'] }, 'unsupported_params must be an array of'],
      [{ ...sonnet, unsupported_params: 'temperature' }, 'unsupported_params must be an array of'],
      [{ ...sonnet, max_tokens: 1 }, 'unknown field "max_tokens"'],
    ];
    for (const [entry, message] of cases) assertRefused(text([entry]), message);
  });

  test('cache prices left out are the input price of their kind (real-time or batch); those given are kept', () => {
    const basic = { input: 2, output: 8, batch_input: 1, batch_output: 4 };
    const parsed = (prices: object) =>
      parseModelCatalog(text([{ ...sonnet, prices_usd_per_mtok: prices }]), 'm.json').entries[0]?.prices;
    assert.deepEqual(parsed(basic), {
      ...basic,
      cache_write: 2,
      cache_write_1h: 2,
      cache_read: 2,
      batch_cache_write: 1,
      batch_cache_write_1h: 1,
      batch_cache_read: 1,
    });
    assert.deepEqual(parsed({ ...basic, cache_read: 0.5, batch_cache_read: 0.25 }), {
      ...basic,
      cache_write: 2,
      cache_write_1h: 2,
      cache_read: 0.5,
      batch_cache_write: 1,
      batch_cache_write_1h: 1,
      batch_cache_read: 0.25,
    });
    assertRefused(
      text([{ ...sonnet, prices_usd_per_mtok: { ...basic, cache_read: -1 } }]),
      'prices_usd_per_mtok.cache_read',
    );
    assertRefused(
      text([{ ...sonnet, prices_usd_per_mtok: { ...basic, batch_cache_write_1h: '3' } }]),
      'prices_usd_per_mtok.batch_cache_write_1h must be a number',
    );
  });

  test('refuses a duplicate id, naming the later entry', () => {
    assertRefused(
      text([sonnet, { id: 'gpt-4o', routes: [{ provider: 'openai', model: 'gpt-4o' }] }, sonnet]),
      'models[2] ("claude-sonnet-4-5"): id duplicates',
    );
  });

  test('the shipped catalog parses; its OpenAI and Anthropic entries carry limits and batch prices at half', () => {
    const path = new URL('../../models/catalog.json', import.meta.url);
    const catalog = parseModelCatalog(readFileSync(path, 'utf8'), 'models/catalog.json');
    const ids = catalog.entries.map((e) => e.id);
    for (const id of [
      'claude-sonnet-4-5',
      'claude-haiku-4-5',
      'claude-opus-4-1',
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'o3',
    ]) {
      assert.ok(ids.includes(id), id);
    }
    const raw = JSON.parse(readFileSync(path, 'utf8')).models as { id: string; prices_usd_per_mtok: any }[];
    for (const entry of catalog.entries) {
      assert.ok(entry.maxOutputTokens !== null && entry.prices !== null, entry.id);
      const p = entry.prices;
      assert.equal(p.batch_input, p.input / 2, entry.id);
      assert.equal(p.batch_output, p.output / 2, entry.id);
      // Every model caches: the file gives its cache prices (docs/models.md says where from).
      const given = raw.find((m) => m.id === entry.id)?.prices_usd_per_mtok;
      assert.ok(given.cache_read !== undefined && given.batch_cache_read !== undefined, entry.id);
      assert.equal(p.batch_cache_read, p.cache_read / 2, entry.id);
      assert.ok(p.cache_read < p.input, entry.id);
      if (entry.id.startsWith('claude-')) {
        // Anthropic: 5-minute writes 1.25x the input price, 1-hour writes 2x, reads 0.1x; batch: half.
        const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;
        assert.ok(near(p.cache_write, p.input * 1.25), entry.id);
        assert.ok(near(p.cache_write_1h, p.input * 2), entry.id);
        assert.ok(near(p.cache_read, p.input * 0.1), entry.id);
        assert.ok(near(p.batch_cache_write, p.cache_write / 2) && near(p.batch_cache_write_1h, p.cache_write_1h / 2));
      } else {
        // OpenAI charges nothing extra to write its cache: writes are at the input price.
        assert.deepEqual([p.cache_write, p.cache_write_1h], [p.input, p.input], entry.id);
      }
    }
    assert.deepEqual(catalogEntry(catalog, 'claude-sonnet-4-5')?.routes, sonnet.routes);
    assert.deepEqual(catalogEntry(catalog, 'o3')?.unsupportedParams, ['temperature', 'top_p', 'stop_sequences']);
  });
});

describe('pricesForCargo', () => {
  const priced = (batch_input: number) => ({
    input: 2 * batch_input,
    output: 4 * batch_input,
    batch_input,
    batch_output: 2 * batch_input,
  });
  /** The prices used for `priced(n)`: its cache prices are its input prices. */
  const used = (batch_input: number) => ({
    ...priced(batch_input),
    cache_write: 2 * batch_input,
    cache_write_1h: 2 * batch_input,
    cache_read: 2 * batch_input,
    batch_cache_write: batch_input,
    batch_cache_write_1h: batch_input,
    batch_cache_read: batch_input,
  });
  const catalog = parseModelCatalog(
    text([
      sonnet,
      { id: 'bare', routes: [{ provider: 'openai', model: 'bare-1' }] },
      { id: 'shared-a', routes: [{ provider: 'openai', model: 'shared-1' }], prices_usd_per_mtok: priced(1) },
      { id: 'shared-b', routes: [{ provider: 'openai', model: 'shared-1' }], prices_usd_per_mtok: priced(5) },
      { id: 'mock-priced', routes: [{ provider: 'mock', model: 'svc-mock' }], prices_usd_per_mtok: priced(1) },
    ]),
    'm.json',
  );
  const cargo = (model: string, provider: string, providerModel: string) =>
    pricesForCargo(catalog, { model, provider, providerModel });

  test("a catalog id's own prices, whichever of its routes it took", () => {
    const { prices_usd_per_mtok } = sonnet;
    assert.deepEqual(cargo('claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5-20250929'), prices_usd_per_mtok);
    assert.deepEqual(
      cargo('claude-sonnet-4-5', 'bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'),
      prices_usd_per_mtok,
    );
  });

  test('two ids routed to one provider model keep their own prices', () => {
    assert.deepEqual(cargo('shared-a', 'openai', 'shared-1'), used(1));
    assert.deepEqual(cargo('shared-b', 'openai', 'shared-1'), used(5));
  });

  test('a provider-qualified name takes the prices of the entry with its route', () => {
    assert.deepEqual(
      cargo('anthropic/claude-sonnet-4-5-20250929', 'anthropic', 'claude-sonnet-4-5-20250929'),
      sonnet.prices_usd_per_mtok,
    );
    assert.equal(cargo('openai/claude-sonnet-4-5-20250929', 'openai', 'claude-sonnet-4-5-20250929'), null);
  });

  test('null where the catalog gives no prices', () => {
    assert.equal(cargo('bare', 'openai', 'bare-1'), null);
    assert.equal(cargo('openai/gpt-unlisted', 'openai', 'gpt-unlisted'), null);
  });

  test('the mock provider is never billed: svc-mock, and an id routed to it whatever its prices', () => {
    assert.deepEqual(cargo('svc-mock', 'mock', 'svc-mock'), MOCK_PRICES);
    assert.deepEqual(cargo('mock-priced', 'mock', 'svc-mock'), MOCK_PRICES);
  });
});
