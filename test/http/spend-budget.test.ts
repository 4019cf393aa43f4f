/**
 * Spend budgets on every backend, through the API and the pipeline (an OpenAI emulator serves a
 * catalog id priced in a test models file; svc-mock is never billed, so it cannot spend): a budget
 * reached exactly, records counted each, reservations released by cancel and by a failed cargo
 * and replaced by the real cost of a stored result, unpriced models, and the day and the month
 * rolling over (a manual clock).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Config, loadConfig } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { setSpendBudget } from '../../src/operations/set-spend-budget.js';
import type { Service } from '../../src/service.js';
import { createProjectWithKey, testConfig } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { type OpenAIEmulator, startOpenAIEmulator } from '../helpers/openai-emulator.js';
import { settleCargo } from '../helpers/pipeline.js';
import { type SmtpCapture, startSmtpCapture } from '../helpers/smtp-capture.js';

/** 1 USD a million tokens, batch and real-time alike: a token costs 1e-6 USD. */
const PRICES = { input: 1, output: 1, batch_input: 1, batch_output: 1 };
const dir = mkdtempSync(join(tmpdir(), 'barge-spend-'));
const modelsFile = join(dir, 'models.json');
writeFileSync(
  modelsFile,
  JSON.stringify({
    models: [
      { id: 'priced', routes: [{ provider: 'openai', model: 'gpt-4o-mini' }], prices_usd_per_mtok: PRICES },
      { id: 'unpriced', routes: [{ provider: 'openai', model: 'gpt-4o' }] },
    ],
  }),
);

/**
 * A cargo estimated at exactly 1,000 tokens, 0.001 USD: "abcd" is 4 bytes (1 token), with 999
 * tokens of output; the given text must be 4 bytes too.
 */
const single = (text = 'abcd') => ({
  params: { model: 'priced', max_tokens: 999, messages: [{ role: 'user', content: text }] },
});
const EACH = 0.001;

for (const backend of await backends()) {
  describe(`spend budgets on ${backend.name}`, () => {
    // 22:00 UTC on the last-but-one day of November: the day and the month end within the suite.
    const clock = new ManualClock(Date.UTC(2026, 10, 29, 22));
    let emu: OpenAIEmulator;
    let smtp: SmtpCapture;
    const config: Partial<Config> = {};
    before(async () => {
      smtp = await startSmtpCapture();
      config.smtp = { url: smtp.url, from: 'barge <barge@localhost>' };
      emu = await startOpenAIEmulator({
        clock: () => clock.now(),
        endOnRetrieve: true,
        outcome: (line) =>
          JSON.stringify(line.body.messages).includes('fail')
            ? { type: 'errored', status_code: 400, error: { message: 'refused', type: 'invalid_request_error' } }
            : undefined,
      });
      const base = testConfig();
      config.models = loadConfig({ BARGE_MODELS_FILE: modelsFile }).models;
      config.providers = { ...base.providers, openai: { apiKey: emu.apiKey, baseUrl: emu.baseURL } };
      // Every submit reads the counters: what one process sees is exact.
      config.storage = { ...base.storage, checkMs: 0 };
    });
    after(async () => {
      await emu?.close();
      await smtp?.close();
    });
    const h = harness(backend, { clock, config });

    const load = (key: string, body: unknown) => h.app.request('POST', '/cargo/load', { key, body });
    const budget = (slug: string, monthlyUsd: number, dailyUsd: number | null = null) =>
      setSpendBudget({ database: h.db.database, clock }, { slug, mode: 'own', monthlyUsd, dailyUsd });
    const project = async () => createProjectWithKey(h.db.database, { now: clock.now() });
    const cargoCount = async (projectId: string) =>
      Number(
        (
          await h.db.database.read
            .selectFrom('cargo')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('project_id', '=', projectId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const budgets = async (key: string) => {
      const res = await h.app.request('GET', '/usage', { key });
      assert.equal(res.status, 200, res.text);
      return res.body.budgets as {
        period: string;
        starts: string;
        budget_usd: number;
        spent_usd: number;
        reserved_usd: number;
      }[];
    };
    /** Runs the pipeline until these cargo have their results (OpenAI's 60 s batch wait first). */
    const settle = async (worker: Service, ids: string[]) => {
      clock.advance(60_000);
      await worker.runUntilIdle();
      await settleCargo(worker, clock, h.db.database, ids, { stepMs: 30_000, tries: 20 });
    };
    const costOf = async (ids: string[]) => {
      const rows = await h.db.database.read
        .selectFrom('results')
        .select(['cost_usd'])
        .where('cargo_id', 'in', ids)
        .execute();
      return rows.reduce((sum, r) => sum + Math.round(Number(r.cost_usd ?? 0) * 1e9), 0) / 1e9;
    };

    test('a budget reached exactly: the last cargo that fits is accepted, the next is 402 and stored nowhere', async () => {
      const { key, slug, projectId } = await project();
      assert.equal((await budget(slug, 3 * EACH)).ok, true);
      for (let i = 0; i < 3; i++) {
        const res = await load(key, single());
        assert.equal(res.status, 200, res.text);
      }
      const refused = await load(key, single());
      assert.equal(refused.status, 402, refused.text);
      assert.deepEqual(refused.body, {
        detail: {
          error: 'budget_exceeded',
          message: refused.body.detail.message,
          period: 'month',
          budget_usd: 0.003,
          spent_usd: 0,
          reserved_usd: 0.003,
        },
      });
      assert.match(refused.body.detail.message, /monthly/);
      assert.equal(await cargoCount(projectId), 3);
      // svc-mock costs nothing: it still fits.
      const free = await load(key, { params: { model: 'svc-mock', messages: [{ role: 'user', content: 'hi' }] } });
      assert.equal(free.status, 200, free.text);
      assert.deepEqual(
        (await budgets(key)).map((b) => [b.period, b.starts, b.budget_usd, b.spent_usd, b.reserved_usd]),
        [['month', '2026-11-01T00:00:00.000Z', 0.003, 0, 0.003]],
      );
    });

    test('every record is counted, and a daily budget refuses on its own', async () => {
      const { key, slug, projectId } = await project();
      await budget(slug, 1, 2 * EACH);
      const records = {
        params: { model: 'priced', max_tokens: 999 },
        records: ['a', 'b'].map((recordId) => ({
          recordId,
          modelInput: { messages: [{ role: 'user', content: 'wxyz' }] },
        })),
      };
      assert.equal((await load(key, records)).status, 200);
      const refused = await load(key, single());
      assert.equal(refused.status, 402, refused.text);
      assert.equal(refused.body.detail.period, 'day');
      assert.equal(refused.body.detail.reserved_usd, 2 * EACH);
      assert.equal(await cargoCount(projectId), 1);
    });

    test('a model without prices is 402 unpriced_model for a project with a budget, accepted without one', async () => {
      const { key, slug } = await project();
      const body = { params: { model: 'unpriced', messages: [{ role: 'user', content: 'hi' }] } };
      assert.equal((await load(key, body)).status, 200);
      await budget(slug, 100);
      const refused = await load(key, body);
      assert.equal(refused.status, 402, refused.text);
      assert.equal(refused.body.detail.error, 'unpriced_model');
      assert.equal(refused.body.detail.model, 'unpriced');
      await setSpendBudget({ database: h.db.database, clock }, { slug, mode: 'none' });
      assert.equal((await load(key, body)).status, 200);
    });

    test('cancel releases a reservation', async () => {
      const { key, slug } = await project();
      await budget(slug, 2 * EACH);
      const first = await load(key, single());
      assert.equal((await load(key, single())).status, 200);
      assert.equal((await load(key, single())).status, 402);
      const canceled = await h.app.request('POST', `/cargo/${first.body.cargo_id}/cancel`, { key });
      assert.equal(canceled.status, 200, canceled.text);
      assert.equal((await load(key, single())).status, 200);
      assert.equal((await load(key, single())).status, 402);
    });

    test('a stored result replaces its reservation by its real cost; a failed cargo releases it; the day and the month roll over', async () => {
      const { worker } = await h.worker();
      const { key, slug } = await project();
      await budget(slug, 1);
      const ok = await load(key, single('abcd'));
      const failed = await load(key, single('fail'));
      assert.deepEqual([ok.status, failed.status], [200, 200]);
      assert.equal((await budgets(key))[0]?.reserved_usd, 2 * EACH);
      await settle(worker, [ok.body.cargo_id, failed.body.cargo_id]);
      const spent = await costOf([ok.body.cargo_id, failed.body.cargo_id]);
      assert.ok(spent > 0 && spent < EACH, `real cost ${spent}`);
      assert.equal(await costOf([failed.body.cargo_id]), 0);
      const [month] = await budgets(key);
      assert.deepEqual([month?.spent_usd, month?.reserved_usd], [spent, 0]);

      // Today's budget is what the results cost: nothing more fits today.
      await budget(slug, 1, spent);
      const today = await load(key, single());
      assert.equal(today.status, 402, today.text);
      assert.deepEqual([today.body.detail.period, today.body.detail.spent_usd], ['day', spent]);
      // The next UTC day: today's spend is 0, this month's is not.
      clock.set(Date.UTC(2026, 10, 30, 0, 0, 1));
      await budget(slug, spent + EACH, EACH);
      const tomorrow = await load(key, single());
      assert.equal(tomorrow.status, 200, tomorrow.text);
      const monthFull = await load(key, single());
      assert.equal(monthFull.status, 402);
      assert.deepEqual(
        [monthFull.body.detail.period, monthFull.body.detail.spent_usd, monthFull.body.detail.reserved_usd],
        ['month', spent, EACH],
      );
      // December: the month's spend starts from 0 (the reservation still counts until it ends).
      clock.set(Date.UTC(2026, 11, 1, 0, 0, 1));
      await budget(slug, 2 * EACH, null);
      const december = await load(key, single());
      assert.equal(december.status, 200, december.text);
      assert.deepEqual(
        (await budgets(key)).map((b) => [b.period, b.starts, b.spent_usd, b.reserved_usd]),
        [['month', '2026-12-01T00:00:00.000Z', 0, 2 * EACH]],
      );
    });

    test('alerts at 50, 80 and 100 % go out once each through the outbox; the gauge shows the ratio', async () => {
      const { worker } = await h.worker();
      const { key, slug } = await project();
      await h.db.database.write
        .updateTable('projects')
        .set({ notification_email: 'owner@example.com' })
        .where('slug', '=', slug)
        .execute();
      await budget(slug, 1);
      const loaded = await load(key, single());
      await settle(worker, [loaded.body.cargo_id]);
      const spent = await costOf([loaded.body.cargo_id]);
      const mailOf = () => smtp.messages.filter((m) => m.to.includes('owner@example.com'));
      // Each budget puts the spend at the next threshold; each watch runs twice.
      for (const [factor, threshold] of [
        [2, 50],
        [1.25, 80],
        [1, 100],
      ] as const) {
        await budget(slug, Math.round(spent * factor * 1e9) / 1e9);
        for (let i = 0; i < 2; i++) await worker.runUntilIdle();
        const mail = mailOf();
        assert.equal(mail.length, [50, 80, 100].indexOf(threshold) + 1, `after ${threshold} %`);
        assert.match(
          mail.at(-1)?.headers.subject ?? '',
          new RegExp(`${slug} has spent ${threshold} % of its monthly budget`),
        );
      }
      assert.match(mailOf().at(-1)?.text ?? '', /New cargo are refused \(402 budget_exceeded\)/);
      const metrics = await h.app.request('GET', '/metrics');
      assert.match(metrics.text, new RegExp(`^barge_project_budget_ratio\\{project="${slug}"\\} 1$`, 'm'));
    });
  });
}

process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
