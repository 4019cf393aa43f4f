/**
 * Each batch's steps run on their own, from outside: `barge serve` against the Anthropic and OpenAI
 * emulators on loopback, in real time. A create held open at one provider holds only its own batch;
 * and a call past BARGE_PROVIDER_CALL_TIMEOUT_MS is abandoned and judged like a refused connection,
 * the job it made adopted, never doubled.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { serveHarness } from '../helpers/harness.js';
import { oneBatchOf } from '../helpers/held-create.js';
import { type OpenAIEmulator, startOpenAIEmulator } from '../helpers/openai-emulator.js';
import { loadOverHttp } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const body = (model: string, content: string) => ({
  params: { model, max_tokens: 20, messages: [{ role: 'user', content }] },
});

for (const backend of await backends({ childProcesses: true })) {
  describe(`independent batch steps on ${backend.name}`, () => {
    const h = serveHarness(backend);
    let anthropic: AnthropicEmulator;
    let openai: OpenAIEmulator;
    before(async () => {
      // Batches end on their first poll (OpenAI's walk a status a poll).
      anthropic = await startAnthropicEmulator({ stepEveryRetrieves: 1 });
      openai = await startOpenAIEmulator({ stepEveryRetrieves: 1 });
    });
    after(async () => {
      await anthropic.close();
      await openai.close();
    });
    const providerEnv = () => ({
      ANTHROPIC_API_KEY: anthropic.apiKey,
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_API_KEY: openai.apiKey,
      OPENAI_BASE_URL: openai.baseURL,
    });
    const statusOf = async (ids: string[]) =>
      (await h.db.database.read.selectFrom('cargo').select('status').where('id', 'in', ids).execute()).map(
        (c) => c.status,
      );
    const completed = (what: string, ids: string[], timeoutMs = 20_000) =>
      waitFor(
        what,
        () => statusOf(ids),
        (s) => s.length === ids.length && s.every((x) => x === 'completed'),
        {
          timeoutMs,
          intervalMs: 100,
        },
      );

    test('an Anthropic create held open: an OpenAI and a svc-mock batch are submitted, polled and collected meanwhile', async () => {
      const held = anthropic.holdNextCreate('on-arrival');
      // svc-mock answers after a while, so its batch is polled while processing before it is collected.
      const { child, url } = await h.serveAll({ ...providerEnv(), BARGE_MOCK_LATENCY_MS: '1500' });
      const { key } = await createProjectWithKey(h.db.database);
      const claude = await loadOverHttp(url, key, body('claude-sonnet-4-5', 'held at the provider'));
      await held.arrived;

      const others = [
        await loadOverHttp(url, key, body('gpt-4o-mini', 'not held')),
        await loadOverHttp(url, key, body('svc-mock', 'not held either')),
      ];
      await completed('the OpenAI and svc-mock cargo completed while the Anthropic create is held', others);
      assert.deepEqual(await statusOf([claude]), ['batched'], 'the Anthropic create is still open');

      held.release();
      await completed('the Anthropic cargo completed once its create answered', [claude]);
      await child.stop('SIGTERM');
    });

    test('a create past the call deadline is abandoned; after the hold ends exactly one job holds the requests', async () => {
      const held = anthropic.holdNextCreate('on-arrival');
      const { url } = await h.serveAll({ ...providerEnv(), ...oneBatchOf(2), BARGE_PROVIDER_CALL_TIMEOUT_MS: '1000' });
      const { key } = await createProjectWithKey(h.db.database);
      const ids = [
        await loadOverHttp(url, key, body('claude-sonnet-4-5', 'deadline one')),
        await loadOverHttp(url, key, body('claude-sonnet-4-5', 'deadline two')),
      ];
      await held.arrived;
      const createdBefore = anthropic.batches().length;

      const read = h.db.database.read;
      const batchOf = () =>
        read
          .selectFrom('batches')
          .selectAll()
          .where('id', 'in', read.selectFrom('cargo').select('batch_id').where('id', 'in', ids))
          .execute();
      // The call is abandoned at its deadline, while the emulator still holds it open; the retry
      // (a second later) adopts the job it made.
      const [abandoned] = await waitFor(
        'the held create abandoned at its deadline',
        batchOf,
        (rows) => rows.length === 1 && (rows[0]?.attempts ?? 0) >= 1,
        { timeoutMs: 8_000, intervalMs: 50 },
      );
      if (abandoned?.job_id === null) assert.match(abandoned.last_error ?? '', /call deadline/);

      held.release();
      await completed('both cargo completed', ids);
      const [batch] = await batchOf();
      const jobs = anthropic.batches().slice(createdBefore - 1);
      assert.equal(anthropic.batches().length, createdBefore, 'no second create made a job');
      assert.equal(jobs.length, 1, 'one job at the provider: the one the abandoned create made, adopted');
      assert.equal(batch?.job_id, jobs[0]?.id);
      assert.equal(jobs[0]?.requests.length, 2);
    });
  });
}
