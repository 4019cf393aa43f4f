/**
 * POST /cargo/{id}/cancel on every backend: pending and batched cargo are canceled at once and never
 * reach the provider (the Message Batches emulator's create calls are checked), even while a
 * worker forms and submits batches at the same moment; later cargo get 409 cannot_cancel.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { formBatch } from '../../src/store/batches/form.js';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { createProjectWithKey, loadCargo, mockBody, storedCargo, testConfig } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const CREATE_PATH = /^\/v1\/messages\/batches$/;
const HAIKU = 'claude-haiku-4-5';
const haikuBody = (content: string) => ({
  params: { model: HAIKU, max_tokens: 50, messages: [{ role: 'user', content }] },
});

for (const backend of await backends()) {
  describe(`POST /cargo/{id}/cancel on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const config: Partial<Config> = {};
    let emulator: AnthropicEmulator;
    before(async () => {
      emulator = await startAnthropicEmulator();
      config.providers = {
        ...testConfig().providers,
        anthropic: { apiKey: emulator.apiKey, baseUrl: emulator.url, version: '2023-06-01' },
      };
    });
    after(async () => {
      await emulator.close();
    });
    const h = harness(backend, { clock, config });

    /** The user contents of every request the emulator accepted in a create call. */
    const received = () =>
      new Set(
        emulator.log
          .filter((r) => r.method === 'POST' && CREATE_PATH.test(r.path) && r.status === 200)
          .flatMap((r) => (r.body as { requests: { params: { messages: { content: string }[] } }[] }).requests)
          .map((r) => r.params.messages[0]?.content),
      );
    const cancel = (key: string, id: string) => h.app.request('POST', `/cargo/${id}/cancel`, { key });
    /** Forms one batch of the group of `cargoId`, as the batcher would, without submitting it. */
    const formNow = async (cargoId: string) => {
      const row = await storedCargo(h.db.database, cargoId);
      const formed = await formBatch(h.db.database, {
        batchId: `bat_test${Math.random().toString(36).slice(2, 12)}`,
        provider: row.provider,
        providerModel: row.provider_model,
        maxRequests: 1000,
        maxBytes: 10_000_000,
        onlyIfFull: false,
        now: clock.now(),
      });
      assert.ok(formed);
      return formed.batchId;
    };

    test('a pending cargo is canceled at once: the tracking body, a result that says canceled, not billed', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const id = await loadCargo(h.app, key, mockBody('cancel me', { metadata: { t: 1 } }));
      const res = await cancel(key, id);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.cargo_id, id);
      assert.equal(res.body.status, 'canceled');
      assert.equal(res.body.status_description, 'Canceled before processing');
      assert.match(res.body.updated_at, /Z$/);
      const tracking = await h.app.request('GET', `/cargo/${id}/tracking`, { key });
      assert.equal(tracking.body.status, 'canceled');
      const result = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(result.status, 200);
      assert.equal(result.body.success, false);
      assert.equal(result.body.error_message, 'canceled');
      assert.equal(result.body.response, null);
      assert.deepEqual(result.body.metadata, { t: 1 });
      const usage = await h.app.request('GET', '/usage', { key });
      assert.equal(usage.body.totals.cargo, 0);
      // Canceled is terminal: a second cancel is too late, and the workers never pick it up.
      const again = await cancel(key, id);
      assert.equal(again.status, 409);
      assert.deepEqual(again.body.detail, {
        error: 'cannot_cancel',
        message: again.body.detail.message,
        cargo_id: id,
        status: 'canceled',
      });
      const { worker } = await h.worker({ latencyMs: 1000 });
      clock.advance(120_000);
      await worker.runUntilIdle();
      assert.equal((await storedCargo(h.db.database, id)).status, 'canceled');
      assert.equal((await storedCargo(h.db.database, id)).batch_id, null);
    });

    test("another project's cargo and a malformed id are 404", async () => {
      const mine = await createProjectWithKey(h.db.database);
      const theirs = await createProjectWithKey(h.db.database);
      const id = await loadCargo(h.app, theirs.key, mockBody());
      assert.equal((await cancel(mine.key, id)).status, 404);
      assert.equal((await cancel(mine.key, 'crg_nope')).status, 404);
      assert.equal((await storedCargo(h.db.database, id)).status, 'pending');
      assert.equal((await cancel(mine.key, id)).body.detail, 'Cargo not found');
      assert.equal((await h.app.request('POST', `/cargo/${id}/cancel`, {})).status, 401);
    });

    test('a batched cargo leaves its batch, which is submitted without it and with its counts shrunk', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const ids = [];
      for (const content of ['keep-1', 'drop-1', 'keep-2', 'drop-2'])
        ids.push(await loadCargo(h.app, key, haikuBody(content)));
      const batchId = await formNow(ids[0] as string);
      for (const id of ids) assert.equal((await storedCargo(h.db.database, id)).status, 'batched');
      for (const id of [ids[1], ids[3]] as string[]) {
        const res = await cancel(key, id);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.status, 'canceled');
      }
      const batch = await h.db.database.read
        .selectFrom('batches')
        .selectAll()
        .where('id', '=', batchId)
        .executeTakeFirstOrThrow();
      assert.equal(batch.cargo_count, 2);
      assert.equal(batch.request_count, 2);
      const { worker } = await h.worker();
      await worker.runUntilIdle();
      const sent = received();
      assert.ok(sent.has('keep-1') && sent.has('keep-2'), 'the rest of the batch was submitted');
      assert.ok(!sent.has('drop-1') && !sent.has('drop-2'), 'no canceled cargo reached the provider');
      const processing = await cancel(key, ids[0] as string);
      assert.equal(processing.status, 409);
      assert.equal(processing.body.detail.error, 'cannot_cancel');
      assert.equal(processing.body.detail.status, 'processing');
    });

    test('a batch whose every cargo was canceled ends without a job', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const id = await loadCargo(h.app, key, haikuBody('alone-and-canceled'));
      const batchId = await formNow(id);
      assert.equal((await cancel(key, id)).status, 200);
      const { worker } = await h.worker();
      await worker.runUntilIdle();
      const batch = await h.db.database.read
        .selectFrom('batches')
        .selectAll()
        .where('id', '=', batchId)
        .executeTakeFirstOrThrow();
      assert.equal(batch.status, 'ended');
      assert.equal(batch.end_reason, 'canceled');
      assert.equal(batch.job_id, null);
      assert.ok(!received().has('alone-and-canceled'));
    });

    test('once its batch is being submitted, a batched cargo cannot be canceled (409, status batched)', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const id = await loadCargo(h.app, key, haikuBody('too-late'));
      const batchId = await formNow(id);
      // What recordSubmitIntent writes before the first provider call.
      await h.db.database.write
        .updateTable('batches')
        .set({ submit_started_at: clock.now() })
        .where('id', '=', batchId)
        .execute();
      const res = await cancel(key, id);
      assert.equal(res.status, 409);
      assert.equal(res.body.detail.error, 'cannot_cancel');
      assert.equal(res.body.detail.status, 'batched');
      assert.equal((await storedCargo(h.db.database, id)).status, 'batched');
    });

    test('cancels racing a worker that forms and submits: a canceled cargo never reaches the provider, a refused one does', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const contents = Array.from({ length: 30 }, (_, i) => `race-${backend.name}-${i}`);
      const ids: string[] = [];
      for (const content of contents) ids.push(await loadCargo(h.app, key, haikuBody(content)));
      const { worker } = await h.worker();
      clock.advance(120_000);
      const [, ...answers] = await Promise.all([worker.runUntilIdle(), ...ids.map((id) => cancel(key, id))]);
      await worker.runUntilIdle();
      const sent = received();
      answers.forEach((res, i) => {
        const content = contents[i] as string;
        if (res.status === 200) {
          assert.equal(res.body.status, 'canceled');
          assert.ok(!sent.has(content), `${content} was canceled and must not reach the provider`);
        } else {
          assert.equal(res.status, 409, res.text);
          assert.ok(sent.has(content), `${content} was refused a cancel, so it went to the provider`);
        }
      });
      for (let i = 0; i < ids.length; i++) {
        const row = await storedCargo(h.db.database, ids[i] as string);
        assert.equal(row.status === 'canceled', answers[i]?.status === 200);
      }
    });
  });
}
