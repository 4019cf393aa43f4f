/**
 * GET /usage on every backend: tokens and cost by UTC day and model, per project, after purges, and
 * never padding; and, through `barge serve` with an operator's catalog, the prices each model id is
 * billed at.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { MOCK_PRICES } from '../../src/domain/model-catalog.js';
import { roundUsd } from '../../src/domain/usage.js';
import type { Service } from '../../src/service.js';
import { createProjectWithKey, fetchResult, loadCargo, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness, serveHarness } from '../helpers/harness.js';
import { type OpenAIEmulator, startOpenAIEmulator } from '../helpers/openai-emulator.js';
import { SONNET_PRICES } from '../helpers/prices.js';
import { loadOverHttp } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const DAY = 86_400_000;
const SONNET = SONNET_PRICES;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Tokens {
  input: number;
  output: number;
}

for (const backend of await backends()) {
  describe(`GET /usage on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const h = harness(backend, { clock });

    const load = (key: string, body: unknown) => loadCargo(h.app, key, body);
    /** Drives svc-mock cargo (latency 0) from pending to their result, a few seconds of the clock. */
    const complete = async (worker: Service) => {
      for (let step = 0; step < 3; step++) {
        clock.advance(1000);
        await worker.runUntilIdle();
      }
    };
    const result = (key: string, id: string) => fetchResult(h.app, key, id);
    /** The tokens svc-mock reported in a result: its message's, or the sum over its records'. */
    const tokensOf = async (key: string, id: string): Promise<Tokens> => {
      const { response } = await result(key, id);
      if (response === null) return { input: 0, output: 0 };
      const messages = response.type === 'records' ? response.records.map((r: any) => r.response) : [response];
      return messages
        .filter((m: any) => m !== null)
        .reduce(
          (t: Tokens, m: any) => ({ input: t.input + m.usage.input_tokens, output: t.output + m.usage.output_tokens }),
          {
            input: 0,
            output: 0,
          },
        );
    };
    const usage = async (key: string, query = '') => {
      const res = await h.app.request('GET', `/usage${query}`, { key });
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const records = (n: number, stem: string) => ({
      params: { model: 'svc-mock', max_tokens: 64 },
      records: Array.from({ length: n }, (_, i) => ({
        recordId: `r${i}`,
        modelInput: { messages: [{ role: 'user', content: `${stem} number ${i} ${'word '.repeat(i * 3)}` }] },
      })),
    });

    test("rows carry svc-mock's tokens at cost 0; a records cargo sums its records; a failed request counts none", async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const { key } = await createProjectWithKey(h.db.database);
      const plain = await load(key, mockBody('How deep is the river at the lock?'));
      const listed = await load(key, records(3, 'record'));
      const failed = await load(key, mockBody('svc-mock:fail please'));
      await complete(worker);
      assert.equal((await result(key, failed)).success, false);
      const a = await tokensOf(key, plain);
      const b = await tokensOf(key, listed);
      assert.ok(a.input > 0 && a.output > 0 && b.input > a.input, JSON.stringify({ a, b }));

      const input_tokens = a.input + b.input;
      const output_tokens = a.output + b.output;
      const counts = {
        cargo: 3,
        requests: 5,
        input_tokens,
        output_tokens,
        // Plain text marks nothing for the prompt cache.
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cost_usd: 0,
        standard_cost_usd: 0,
      };
      assert.deepEqual(await usage(key), {
        data: [{ date: day(clock.now()), model: 'svc-mock', ...counts }],
        totals: { ...counts, savings_usd: 0 },
        budgets: [],
      });

      // The stored rows, each result on its own.
      const rows = await h.db.database.read
        .selectFrom('results')
        .select(['cargo_id', 'input_tokens', 'output_tokens', 'cost_usd', 'standard_cost_usd'])
        .where('cargo_id', 'in', [plain, listed, failed])
        .execute();
      const byId = new Map(rows.map((r) => [r.cargo_id, r]));
      assert.deepEqual(
        [plain, listed, failed].map((id) => {
          const r = byId.get(id);
          return [Number(r?.input_tokens), Number(r?.output_tokens), r?.cost_usd];
        }),
        [
          [a.input, a.output, 0],
          [b.input, b.output, 0],
          [0, 0, 0],
        ],
      );
    });

    test("another project's usage is not visible; a project without results reports zeros", async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const owner = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      await load(owner.key, mockBody('mine'));
      await complete(worker);
      assert.equal((await usage(owner.key)).totals.cargo, 1);
      const zeros = {
        cargo: 0,
        requests: 0,
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cost_usd: 0,
        standard_cost_usd: 0,
      };
      assert.deepEqual(await usage(other.key), { data: [], totals: { ...zeros, savings_usd: 0 }, budgets: [] });
      assert.equal((await h.app.request('GET', '/usage')).status, 401);
    });

    test('from and to select by the UTC day a result was produced, both included; the default is the last 30 days', async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const { key } = await createProjectWithKey(h.db.database);
      const first = await load(key, mockBody('on the first day'));
      await complete(worker);
      const firstDay = day(clock.now());
      clock.advance(3 * DAY);
      const second = await load(key, mockBody('three days later, a longer question about the weir'));
      await complete(worker);
      const secondDay = day(clock.now());
      const [t1, t2] = [await tokensOf(key, first), await tokensOf(key, second)];
      const row = (date: string, t: Tokens) => ({
        date,
        model: 'svc-mock',
        cargo: 1,
        requests: 1,
        input_tokens: t.input,
        output_tokens: t.output,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cost_usd: 0,
        standard_cost_usd: 0,
      });
      const dates = async (query: string) => (await usage(key, query)).data.map((r: { date: string }) => r.date);

      assert.deepEqual((await usage(key)).data, [row(firstDay, t1), row(secondDay, t2)]);
      assert.deepEqual((await usage(key, `?from=${firstDay}&to=${firstDay}`)).data, [row(firstDay, t1)]);
      assert.deepEqual(await dates(`?from=${day(Date.parse(firstDay) + DAY)}`), [secondDay]);
      assert.deepEqual(await dates(`?to=${day(Date.parse(secondDay) - DAY)}`), [firstDay]);
      const both = await usage(key, `?from=${firstDay}&to=${secondDay}`);
      assert.equal(both.totals.cargo, 2);
      assert.equal(both.totals.input_tokens, t1.input + t2.input);

      // 30 days on, the first day has left the default range; the second is its first day.
      clock.advance(29 * DAY);
      assert.deepEqual(await dates(''), [secondDay]);
      clock.advance(DAY);
      assert.deepEqual(await dates(''), []);
      assert.deepEqual(await dates(`?to=${secondDay}`), [firstDay, secondDay]);
    });

    test('a purged result keeps its usage', async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const { key } = await createProjectWithKey(h.db.database);
      const id = await load(key, mockBody('short-lived', { result_ttl_seconds: 3600 }));
      await complete(worker);
      const before = await usage(key);
      assert.equal(before.totals.cargo, 1);
      clock.advance(2 * 3_600_000);
      await worker.runUntilIdle();
      assert.equal((await h.app.request('GET', `/cargo/${id}/result`, { key })).status, 410);
      assert.deepEqual(await usage(key), before);
    });

    test('bad days, from after to, ranges over 366 days and unknown parameters are 400 naming the parameter', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const refused = async (query: string, detail: RegExp, path: string) => {
        const res = await h.app.request('GET', `/usage${query}`, { key });
        assert.equal(res.status, 400, `${query}: ${res.text}`);
        assert.match(res.body.detail, detail, query);
        assert.equal(res.body.errors?.[0]?.path, path, query);
      };
      await refused('?from=2026-13-01', /^Invalid query: from '2026-13-01': use a UTC day as YYYY-MM-DD\.$/, 'from');
      await refused('?to=yesterday', /^Invalid query: to 'yesterday'/, 'to');
      await refused('?from=2026-02-30&to=2026-03-01', /from '2026-02-30'/, 'from');
      await refused('?from=2026-11-02&to=2026-11-01', /from '2026-11-02': is after to \(2026-11-01\)/, 'from');
      await refused('?from=2025-01-01&to=2026-01-02', /367 days; one report covers at most 366/, 'from');
      await refused('?since=2026-01-01', /^Invalid query: since is not a known field\.$/, 'since');
      await refused('?from=2026-01-01&from=2026-01-02', /^Invalid query: from /, 'from');
      assert.deepEqual((await usage(key, '?from=2024-01-01&to=2024-12-31')).data, []);
    });

    test('padding requests are counted on their batch, never on the project', async () => {
      const { worker } = await h.worker({ latencyMs: 0, limits: { minRequests: 5 } });
      const { key } = await createProjectWithKey(h.db.database);
      const ids = [await load(key, mockBody('one')), await load(key, mockBody('two'))];
      await complete(worker);
      const [t1, t2] = [await tokensOf(key, ids[0] as string), await tokensOf(key, ids[1] as string)];
      const { totals } = await usage(key);
      assert.deepEqual(
        [totals.cargo, totals.requests, totals.input_tokens, totals.output_tokens],
        [2, 2, t1.input + t2.input, t1.output + t2.output],
      );
      const batch = await h.db.database.read
        .selectFrom('batches')
        .innerJoin('cargo', 'cargo.batch_id', 'batches.id')
        .select(['batches.padding_count', 'batches.padding_input_tokens', 'batches.padding_output_tokens'])
        .where('cargo.id', '=', ids[0] as string)
        .executeTakeFirstOrThrow();
      assert.equal(batch.padding_count, 3);
      assert.ok(Number(batch.padding_input_tokens) > 0, 'the padding requests used input tokens');
      assert.ok(Number(batch.padding_output_tokens) > 0, 'and output tokens');
    });

    test('with prices known, cost_usd is the tokens at the batch prices and standard_cost_usd at the real-time ones', async () => {
      const asked: string[] = [];
      const { worker } = await h.worker({
        latencyMs: 0,
        prices: ({ model, provider, providerModel }) => {
          asked.push(`${model} on ${provider}/${providerModel}`);
          return SONNET;
        },
      });
      const { key } = await createProjectWithKey(h.db.database);
      const plain = await load(key, mockBody('What does a barge carry upstream in winter?'));
      const listed = await load(key, records(2, 'priced'));
      await complete(worker);
      assert.ok(asked.length > 0 && asked.every((a) => a === 'svc-mock on mock/svc-mock'), asked.join());

      const costs = (t: Tokens) => ({
        cost: (t.input * 1.5 + t.output * 7.5) / 1e6,
        standard: (t.input * 3 + t.output * 15) / 1e6,
      });
      const tokens = [await tokensOf(key, plain), await tokensOf(key, listed)];
      const stored = await h.db.database.read
        .selectFrom('results')
        .select(['cargo_id', 'cost_usd', 'standard_cost_usd'])
        .where('cargo_id', 'in', [plain, listed])
        .execute();
      for (const [i, id] of [plain, listed].entries()) {
        const row = stored.find((r) => r.cargo_id === id);
        const expected = costs(tokens[i] as Tokens);
        assert.equal(row?.cost_usd, expected.cost, `cost of ${id}`);
        assert.equal(row?.standard_cost_usd, expected.standard, `standard cost of ${id}`);
      }
      const cost = costs(tokens[0] as Tokens).cost + costs(tokens[1] as Tokens).cost;
      const standard = costs(tokens[0] as Tokens).standard + costs(tokens[1] as Tokens).standard;
      const { data, totals } = await usage(key);
      assert.equal(data.length, 1);
      assert.equal(data[0].cost_usd, roundUsd(cost));
      assert.equal(data[0].standard_cost_usd, roundUsd(standard));
      assert.equal(totals.cost_usd, roundUsd(cost));
      assert.equal(totals.savings_usd, roundUsd(standard - cost));
      assert.ok(totals.savings_usd > 0);
    });

    test('with no price known, tokens are counted and the costs are null', async () => {
      const { worker } = await h.worker({ latencyMs: 0, prices: () => null });
      const { key } = await createProjectWithKey(h.db.database);
      const id = await load(key, mockBody('unpriced'));
      await complete(worker);
      const t = await tokensOf(key, id);
      const { data, totals } = await usage(key);
      assert.deepEqual(
        [data[0].input_tokens, data[0].output_tokens, data[0].cost_usd, data[0].standard_cost_usd],
        [t.input, t.output, null, null],
      );
      assert.deepEqual([totals.cost_usd, totals.standard_cost_usd, totals.savings_usd], [null, null, null]);
    });
  });
}

for (const backend of await backends({ childProcesses: true })) {
  describe(`what each model id is billed at, through barge serve with BARGE_MODELS_FILE on ${backend.name}`, () => {
    const priced = (batchInput: number) => ({
      input: 2 * batchInput,
      output: 10 * batchInput,
      batch_input: batchInput,
      batch_output: 5 * batchInput,
    });
    /** The prices used for `priced(n)`, which gives no cache prices: the input prices of their kind. */
    const used = (batchInput: number) => ({
      ...priced(batchInput),
      cache_write: 2 * batchInput,
      cache_write_1h: 2 * batchInput,
      cache_read: 2 * batchInput,
      batch_cache_write: batchInput,
      batch_cache_write_1h: batchInput,
      batch_cache_read: batchInput,
    });
    const FREE = MOCK_PRICES;
    const dir = mkdtempSync(join(tmpdir(), 'barge-usage-catalog-'));
    const catalogFile = join(dir, 'models.json');
    writeFileSync(
      catalogFile,
      JSON.stringify({
        models: [
          // Prices on an id routed to the mock provider: neither it nor svc-mock is billed.
          { id: 'mock-priced', routes: [{ provider: 'mock', model: 'svc-mock' }], prices_usd_per_mtok: priced(3) },
          // Two ids routed to one provider model: their cargo share a batch, each keeps its prices.
          { id: 'house-a', routes: [{ provider: 'openai', model: 'gpt-4o-mini' }], prices_usd_per_mtok: priced(1) },
          { id: 'house-b', routes: [{ provider: 'openai', model: 'gpt-4o-mini' }], prices_usd_per_mtok: priced(7) },
        ],
      }),
    );
    let emu: OpenAIEmulator;
    before(async () => {
      emu = await startOpenAIEmulator({ endOnRetrieve: true });
    });
    after(async () => {
      await emu?.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const s = serveHarness(backend);

    test('GET /models lists each id at the prices it is billed at, and GET /usage bills each id at its own', async () => {
      const { url } = await s.serveAll({
        BARGE_MODELS_FILE: catalogFile,
        OPENAI_API_KEY: emu.apiKey,
        OPENAI_BASE_URL: emu.baseURL,
      });
      const { key } = await createProjectWithKey(s.db.database);
      const get = async (path: string) => {
        const res = await fetch(`${url}${path}`, { headers: { 'x-api-key': key } });
        const text = await res.text();
        assert.equal(res.status, 200, `${path}: ${text}`);
        return JSON.parse(text);
      };

      const listed = (await get('/models')).data.map((m: any) => [m.id, m.provider, m.prices_usd_per_mtok]);
      assert.deepEqual(listed, [
        ['svc-mock', 'mock', FREE],
        ['mock-priced', 'mock', FREE],
        ['house-a', 'openai', used(1)],
        ['house-b', 'openai', used(7)],
      ]);

      const models = ['svc-mock', 'mock-priced', 'house-a', 'house-b'];
      const ids = new Map<string, string>();
      for (const model of models) {
        const body = {
          params: { model, max_tokens: 64, messages: [{ role: 'user', content: `Which lock is ${model}?` }] },
        };
        ids.set(model, await loadOverHttp(url, key, body));
      }
      const tokens = new Map<string, { input: number; output: number }>();
      for (const [model, id] of ids) {
        const res = await waitFor(
          `the result of ${model}`,
          () => fetch(`${url}/cargo/${id}/result`, { headers: { 'x-api-key': key } }),
          (r) => r.status === 200,
          { timeoutMs: 20_000, intervalMs: 100 },
        );
        const { success, response } = (await res.json()) as any;
        assert.equal(success, true, model);
        tokens.set(model, { input: response.usage.input_tokens, output: response.usage.output_tokens });
        assert.ok(response.usage.input_tokens > 0 && response.usage.output_tokens > 0, model);
      }

      const cost = (model: string, batchInput: number) => {
        const t = tokens.get(model) as { input: number; output: number };
        return {
          cost_usd: roundUsd((t.input * batchInput + t.output * 5 * batchInput) / 1e6),
          standard_cost_usd: roundUsd((t.input * 2 * batchInput + t.output * 10 * batchInput) / 1e6),
        };
      };
      const { data } = await get('/usage');
      const billed = Object.fromEntries(
        data.map((r: any) => [r.model, { cost_usd: r.cost_usd, standard_cost_usd: r.standard_cost_usd }]),
      );
      assert.deepEqual(billed, {
        'svc-mock': { cost_usd: 0, standard_cost_usd: 0 },
        'mock-priced': { cost_usd: 0, standard_cost_usd: 0 },
        'house-a': cost('house-a', 1),
        'house-b': cost('house-b', 7),
      });
    });
  });
}
