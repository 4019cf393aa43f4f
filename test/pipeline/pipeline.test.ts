/**
 * The batch pipeline with svc-mock on every backend: a cargo's statuses to its result, records, failures, when groups
 * flush, padding, expiry past the completion window, and purging.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { MockProvider } from '../../src/providers/mock/mock-provider.js';
import type { JobStatus, SubmitInput, SubmitStep } from '../../src/providers/provider.js';
import { createProjectWithKey, loadCargo, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { RESULT_ENVELOPE_KEYS } from '../helpers/wire-keys.js';

const HOUR = 3_600_000;

for (const backend of await backends()) {
  describe(`batch pipeline on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const h = harness(backend, { clock });

    const load = (key: string, body: unknown) => loadCargo(h.app, key, body);
    const status = async (key: string, id: string) =>
      (await h.app.request('GET', `/cargo/${id}/tracking`, { key })).body.status as string;
    const cargoRows = (ids: string[]) =>
      h.db.database.write.selectFrom('cargo').selectAll().where('id', 'in', ids).orderBy('id').execute();

    test('a svc-mock cargo goes pending → batched → processing → completed with a section 2.4 result', async () => {
      const { worker } = await h.worker({ latencyMs: 60_000 });
      const { key } = await createProjectWithKey(h.db.database);
      const id = await load(key, mockBody('Tell me about barges', { metadata: { order: 7, tag: 'x' } }));
      assert.equal(await status(key, id), 'pending');
      const notReady = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(notReady.status, 409);
      assert.equal(notReady.body.detail.status, 'pending');

      // The mock's batches flush after its max wait (500 ms); before it, nothing moves.
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'pending');
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'processing');
      const [row] = await cargoRows([id]);
      assert.ok(row?.batch_id, 'the cargo belongs to a batch');
      const processing = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(processing.status, 409);
      assert.deepEqual(processing.body.detail, {
        error: 'result_not_ready',
        message: processing.body.detail.message,
        cargo_id: id,
        status: 'processing',
        status_description: 'Batch is being processed by the provider',
      });

      clock.advance(60_000);
      const endedAt = clock.now();
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'completed');
      const result = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(result.status, 200);
      assert.deepEqual(Object.keys(result.body), RESULT_ENVELOPE_KEYS);
      assert.equal(result.body.cargo_id, id);
      assert.equal(result.body.success, true);
      assert.equal(result.body.error_message, null);
      assert.equal(result.body.created_at, new Date(endedAt).toISOString());
      assert.deepEqual(result.body.metadata, { order: 7, tag: 'x' });
      const message = result.body.response;
      assert.match(message.id, /^msg_mock_[0-9a-f]{24}$/);
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, 'svc-mock');
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.content.length, 1);
      assert.equal(message.content[0].type, 'text');
      assert.match(message.content[0].text, /Tell me about barges/);
      assert.ok(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);
    });

    test('a records cargo gets its records back in input order, failing as a whole if one failed', async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const { key } = await createProjectWithKey(h.db.database);
      const recordIds = ['zeta', 'alpha', 'mid', 'omega', 'beta'];
      const id = await load(key, {
        params: { model: 'svc-mock', max_tokens: 50 },
        records: recordIds.map((recordId, i) => ({
          recordId,
          modelInput: {
            messages: [{ role: 'user', content: recordId === 'mid' ? 'please svc-mock:fail' : `record ${i}` }],
            ...(recordId === 'beta' ? { max_tokens: 3 } : {}),
          },
        })),
      });
      const ok = await load(key, {
        params: { model: 'svc-mock' },
        records: [{ recordId: 'only', modelInput: { messages: [{ role: 'user', content: 'fine' }] } }],
      });
      clock.advance(500);
      await worker.runUntilIdle();

      const failed = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(await status(key, id), 'failed');
      assert.equal(failed.body.success, false);
      assert.equal(failed.body.error_message, '1 of 5 records failed');
      assert.equal(failed.body.response.type, 'records');
      const records = failed.body.response.records;
      assert.deepEqual(
        records.map((r: { recordId: string }) => r.recordId),
        recordIds,
      );
      for (const r of records) {
        assert.deepEqual(Object.keys(r), ['recordId', 'success', 'response', 'error']);
        if (r.recordId === 'mid') {
          assert.equal(r.success, false);
          assert.equal(r.response, null);
          assert.match(r.error, /invalid_request_error/);
        } else {
          assert.equal(r.success, true);
          assert.equal(r.error, null);
          assert.equal(r.response.type, 'message');
        }
      }
      const beta = records.find((r: { recordId: string }) => r.recordId === 'beta');
      assert.equal(beta.response.stop_reason, 'max_tokens');
      assert.equal(beta.response.usage.output_tokens, 3);

      const whole = await h.app.request('GET', `/cargo/${ok}/result`, { key });
      assert.equal(whole.body.success, true);
      assert.equal(whole.body.error_message, null);
      assert.equal(whole.body.response.records[0].recordId, 'only');
      const staged = await h.db.database.write
        .selectFrom('record_results')
        .selectAll()
        .where('cargo_id', 'in', [id, ok])
        .execute();
      assert.equal(staged.length, 0, 'staged record results are removed once assembled');
    });

    test('the fail trigger gives a failed cargo with the provider error in error_message', async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const { key } = await createProjectWithKey(h.db.database);
      const id = await load(key, mockBody('svc-mock:fail please', { metadata: { a: 1 } }));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'failed');
      const res = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(res.status, 200);
      assert.equal(res.body.success, false);
      assert.equal(res.body.response, null);
      assert.match(res.body.error_message, /^invalid_request_error: svc-mock was asked to fail/);
      assert.deepEqual(res.body.metadata, { a: 1 });
    });

    test('groups flush when full and otherwise after their max wait; byte limits split batches', async () => {
      const { worker } = await h.worker({
        latencyMs: 0,
        limits: { maxBytes: 2_000 },
        settings: { batchMaxSize: 3, batchMaxWaitMs: 10_000 },
      });
      const { key } = await createProjectWithKey(h.db.database);
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push(await load(key, mockBody(`small ${i}`)));
      await worker.runUntilIdle();
      let rows = await cargoRows(ids);
      assert.deepEqual(
        rows.map((r) => r.status),
        ['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'pending'],
        'two full batches of 3 go at once; the seventh waits',
      );
      assert.equal(new Set(rows.slice(0, 6).map((r) => r.batch_id)).size, 2);
      clock.advance(9_999);
      await worker.runUntilIdle();
      assert.equal((await cargoRows([ids[6] as string]))[0]?.status, 'pending');
      clock.advance(1);
      await worker.runUntilIdle();
      assert.equal((await cargoRows([ids[6] as string]))[0]?.status, 'completed');

      // Each ~900-byte request: two fit in 2,000 bytes, so three cargo need two batches.
      const big: string[] = [];
      for (let i = 0; i < 3; i++) big.push(await load(key, mockBody(`${i} ${'x'.repeat(800)}`)));
      clock.advance(10_000);
      await worker.runUntilIdle();
      rows = await cargoRows(big);
      assert.ok(rows.every((r) => r.status === 'completed'));
      const batches = await h.db.database.write
        .selectFrom('batches')
        .selectAll()
        .where(
          'id',
          'in',
          rows.map((r) => r.batch_id as string),
        )
        .execute();
      assert.equal(batches.length, 2);
      assert.ok(batches.every((b) => b.request_bytes <= 2_000));
    });

    test('a group below the provider minimum is padded at its deadline, and the padding is discarded', async () => {
      let received = 0;
      class CountingProvider extends MockProvider {
        override async submit(input: SubmitInput): Promise<SubmitStep> {
          for await (const _ of input.requests) received++;
          return super.submit(input);
        }
      }
      const counting = new CountingProvider(clock, { latencyMs: 0, limits: { minRequests: 5 } });
      const { worker } = await h.worker({ providers: [counting] });
      const { key } = await createProjectWithKey(h.db.database);
      const ids = [await load(key, mockBody('one')), await load(key, mockBody('two'))];
      clock.advance(500);
      await worker.runUntilIdle();
      const rows = await cargoRows(ids);
      assert.ok(rows.every((r) => r.status === 'completed'));
      const batch = await h.db.database.write
        .selectFrom('batches')
        .selectAll()
        .where('id', '=', rows[0]?.batch_id as string)
        .executeTakeFirstOrThrow();
      assert.equal(batch.cargo_count, 2);
      assert.equal(batch.padding_count, 3);
      assert.equal(received, 5, 'the provider received the minimum');
      const results = await h.db.database.write
        .selectFrom('results')
        .selectAll()
        .where('cargo_id', 'in', ids)
        .execute();
      assert.equal(results.length, 2);
    });

    test('a job past its completion window is canceled and its cargo fail as expired', async () => {
      const { worker } = await h.worker({ latencyMs: 30 * HOUR });
      const { key } = await createProjectWithKey(h.db.database);
      const id = await load(key, mockBody('slow one'));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'processing');
      clock.advance(23 * HOUR);
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'processing');
      clock.advance(HOUR);
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'failed');
      const res = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.match(res.body.error_message, /^expired: /);
      const [row] = await cargoRows([id]);
      const batch = await h.db.database.write
        .selectFrom('batches')
        .selectAll()
        .where('id', '=', row?.batch_id as string)
        .executeTakeFirstOrThrow();
      assert.equal(batch.status, 'ended');
      assert.equal(batch.end_reason, 'expired');
      assert.notEqual(batch.canceled_at, null);
    });

    test('a job the provider failed as a whole fails its cargo with the provider text', async () => {
      // The provider loses the job: it reports it failed as a whole.
      class LosingProvider extends MockProvider {
        override async status(): Promise<JobStatus> {
          return { state: 'failed', message: 'svc-mock: the job was lost' };
        }
      }
      const { worker } = await h.worker({ providers: [new LosingProvider(clock, { latencyMs: 60_000 })] });
      const { key } = await createProjectWithKey(h.db.database);
      const id = await load(key, mockBody('doomed'));
      clock.advance(500);
      await worker.runUntilIdle();
      clock.advance(60_000);
      await worker.runUntilIdle();
      assert.equal(await status(key, id), 'failed');
      const res = await h.app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(res.body.error_message, 'errored: the provider failed the batch: svc-mock: the job was lost');
    });

    test('results past their retention are purged, leaving what 410 needs', async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const { key } = await createProjectWithKey(h.db.database);
      const short = await load(key, mockBody('short-lived', { result_ttl_seconds: 3600 }));
      const long = await load(key, mockBody('long-lived'));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal((await h.app.request('GET', `/cargo/${short}/result`, { key })).status, 200);

      clock.advance(HOUR - 1);
      await worker.runUntilIdle();
      assert.equal((await h.app.request('GET', `/cargo/${short}/result`, { key })).status, 200);
      clock.advance(1);
      await worker.runUntilIdle();
      const gone = await h.app.request('GET', `/cargo/${short}/result`, { key });
      assert.equal(gone.status, 410);
      assert.deepEqual(gone.body, {
        detail: { error: 'result_expired', message: gone.body.detail.message, cargo_id: short, status: 'completed' },
      });
      const purged = await h.db.database.write
        .selectFrom('results')
        .selectAll()
        .where('cargo_id', '=', short)
        .executeTakeFirstOrThrow();
      assert.equal(purged.response, null);
      assert.notEqual(purged.purged_at, null);
      assert.equal(await status(key, short), 'completed', 'tracking still knows the last status');
      assert.equal((await h.app.request('GET', `/cargo/${long}/result`, { key })).status, 200);
    });
  });
}
