/**
 * The admin API's reports on every backend: a project's usage (what GET /usage answers its own
 * keys, with the days covered), and the providers (enabled or not and by what, batches in flight,
 * the last error and when: an Anthropic emulator on loopback refusing the configured key); their
 * authorization (401s; another project's usage: the 404 of an unknown slug; providers: 403 for a
 * project-limited token).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { load } from '../delivery/webhook-support.js';
import { adminClient, assertOtherProjectHidden, assertTokenRequired } from '../helpers/admin.js';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { createProjectWithKey, testConfig } from '../helpers/app.js';
import { assertDetail, assertInvalidField } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

for (const backend of await backends()) {
  describe(`the admin API's usage and providers on ${backend.name}`, () => {
    let anthropic: AnthropicEmulator;
    const clock = new ManualClock(Date.now());
    const options: { config?: Partial<Config>; clock: ManualClock } = { clock };
    before(async () => {
      anthropic = await startAnthropicEmulator();
      // Enabled with a key the provider refuses: its batches wait to try again, with the error.
      const providers = {
        ...testConfig().providers,
        anthropic: { apiKey: 'sk-ant-revoked', baseUrl: anthropic.url, version: '2023-06-01' },
      };
      options.config = { providers };
    });
    after(() => anthropic.close());
    const h = harness(backend, options);
    const admin = adminClient(h);

    test("a project's usage: what GET /usage answers its keys, with the days covered; refusals", async () => {
      const { slug, key } = await createProjectWithKey(h.db.database);
      await load(h.app, key, 'count me');
      const { worker } = await h.worker({ latencyMs: 0 });
      clock.advance(60_000);
      await worker.runUntilIdle();
      const today = new Date(clock.now()).toISOString().slice(0, 10);
      const token = (await admin.token(slug)).token;

      const own = await h.app.request('GET', '/usage', { key });
      const seen = await admin.call('GET', `/projects/${slug}/usage`, token);
      assert.equal(seen.status, 200, seen.text);
      const { from, to, ...report } = seen.body;
      assert.deepEqual(report, own.body);
      assert.equal(to, today);
      assert.equal(from, new Date(clock.now() - 29 * 86_400_000).toISOString().slice(0, 10));
      assert.equal(report.totals.cargo, 1);
      assert.deepEqual(
        report.data.map((r: { date: string; model: string }) => [r.date, r.model]),
        [[today, 'svc-mock']],
      );

      const day = await admin.call('GET', `/projects/${slug}/usage?from=${today}&to=${today}`, token);
      assert.deepEqual([day.body.from, day.body.to, day.body.totals.cargo], [today, today, 1]);
      assertInvalidField(await admin.call('GET', `/projects/${slug}/usage?from=2026-11-31`, token), 'from');
      assertInvalidField(await admin.call('GET', `/projects/${slug}/usage?from=${today}&to=2000-01-01`, token), 'from');
      assert.equal((await admin.call('GET', `/projects/${slug}/usage?bogus=1`, token)).status, 400);

      const other = await createProjectWithKey(h.db.database);
      await assertTokenRequired(admin, [['GET', `/projects/${other.slug}/usage`]]);
      await assertOtherProjectHidden(admin, token, [['GET', `/projects/${other.slug}/usage`]], other.slug);
    });

    test('providers: enabled or not and by what, batches in flight, the last error and when; all-projects tokens only', async () => {
      const { slug, key } = await createProjectWithKey(h.db.database);
      await load(h.app, key, 'to a provider that refuses the key', {
        params: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] },
      });
      const { worker } = await h.worker({ latencyMs: 0, config: options.config });
      clock.advance(60_000);
      const before = clock.now();
      await worker.runUntilIdle();

      const all = (await admin.token()).token;
      const res = await admin.call('GET', '/providers', all);
      assert.equal(res.status, 200, res.text);
      const byName = Object.fromEntries(res.body.data.map((p: { name: string }) => [p.name, p]));
      assert.deepEqual(Object.keys(byName), ['anthropic', 'openai', 'bedrock', 'mock', 'openai-compatible']);
      const claude = byName.anthropic;
      assert.deepEqual([claude.enabled, claude.enabled_by, claude.batches_in_flight], [true, ['ANTHROPIC_API_KEY'], 1]);
      assert.match(claude.last_error.message, /invalid x-api-key/);
      assert.match(claude.last_error.batch_id, /^bat_/);
      assert.equal(claude.last_error.at, new Date(before).toISOString());
      assert.deepEqual(byName.openai, {
        name: 'openai',
        enabled: false,
        enabled_by: ['OPENAI_API_KEY'],
        batches_in_flight: 0,
        last_error: null,
      });
      assert.deepEqual(byName.bedrock.enabled_by, ['BARGE_BEDROCK_ROLE_ARN', 'BARGE_BEDROCK_S3_URI']);
      assert.deepEqual([byName.mock.enabled, byName.mock.enabled_by], [true, []]);

      await assertTokenRequired(admin, [['GET', '/providers']]);
      assertDetail(
        await admin.call('GET', '/providers', (await admin.token(slug)).token),
        403,
        'This admin token is limited to one project; this needs an all-projects token.',
      );
    });
  });
}
