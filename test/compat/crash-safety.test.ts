/**
 * What a crash leaves of the provider-compatible endpoints, and the sweeper that finishes it, on
 * every backend: a batch whose creator died mid-create is never visible and is deleted once its
 * lease lapses; staged rows left after a batch was made whole are dropped; a cancel recorded but
 * not done is seen through; batches and files go at the end of their retention. The rows are the
 * ones a process killed at that moment leaves; the workers run on a ManualClock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { BATCH_RETENTION_MS } from '../../src/compat/sweeper.js';
import { ManualClock } from '../../src/domain/clock.js';
import { requestCompatCancel } from '../../src/store/compat/batches.js';
import {
  beginCompatBatch,
  beginCompatPublish,
  CompatLeaseLost,
  publishCompatChunk,
  stageCompatRequests,
} from '../../src/store/compat/create.js';
import { deleteCompatBatch } from '../../src/store/compat/delete.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const HOUR = 60 * 60 * 1000;

for (const backend of await backends()) {
  describe(`the sweeper of the batch endpoints on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const h = harness(backend, { clock });
    const worker = () => h.worker({ latencyMs: 600_000, settings: { batchMaxWaitMs: HOUR } });
    const count = async (
      table: 'compat_batches' | 'compat_staged_cargo' | 'compat_batch_requests' | 'compat_cargo' | 'cargo',
    ) =>
      Number(
        (
          await h.db.database.read
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('a batch whose creator died mid-create is never visible, and is deleted once its lease lapses', async () => {
      const { worker: w } = await worker();
      const { projectId, key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const id = 'msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c';
      await beginCompatBatch(h.db.database, {
        id,
        project_id: projectId,
        api: 'anthropic',
        created_at: clock.now(),
        locked_by: 'crashed-process',
        locked_until: clock.now() + 60_000,
        input_file_id: null,
        metadata: null,
      });
      await stageCompatRequests(h.db.database, {
        batchId: id,
        lockedBy: 'crashed-process',
        lockedUntil: clock.now() + 60_000,
        requests: [{ batch_id: id, position: 0, custom_id: 'a', cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c' }],
        staged: [
          {
            batch_id: id,
            position: 0,
            cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
            model: 'svc-mock',
            provider: 'mock',
            provider_model: 'svc-mock',
            request: '{"requests":[{"modelInput":{"max_tokens":5,"messages":[{"role":"user","content":"x"}]}}]}',
            request_bytes: 80,
            metadata: '{}',
            reserved_nusd: 0,
            created_at: clock.now(),
          },
        ],
      });
      const headers = { 'x-api-key': key };
      assert.deepEqual((await h.app.request('GET', '/v1/messages/batches', { headers })).body.data, []);
      assert.equal((await h.app.request('GET', `/v1/messages/batches/${id}`, { headers })).status, 404);
      assert.equal(await count('cargo'), 0, 'none of its requests is a cargo');

      await w.runUntilIdle();
      assert.equal(await count('compat_batches'), 1, 'kept while its lease runs');
      clock.advance(61_000);
      await w.runUntilIdle();
      assert.equal(await count('compat_batches'), 0);
      assert.equal(await count('compat_staged_cargo'), 0);
      assert.equal(await count('compat_batch_requests'), 0);
    });

    test('a publish cut between two chunks loses and doubles nothing: the sweeper takes it over and finishes it', async () => {
      const { worker: w } = await worker();
      const { projectId, key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const id = 'msgbatch_01jd5q3k8m9x2v4w6y8z0a1b3d';
      const lease = { lockedBy: 'publisher', lockedUntil: clock.now() + 60_000 };
      await beginCompatBatch(h.db.database, {
        id,
        project_id: projectId,
        api: 'anthropic',
        created_at: clock.now(),
        locked_by: lease.lockedBy,
        locked_until: lease.lockedUntil,
        input_file_id: null,
        metadata: null,
      });
      const positions = [0, 1, 2, 3, 4];
      const cargoId = (i: number) => `crg_01jd5q3k8m9x2v4w6y8z0a1b${i}x`;
      const request = '{"requests":[{"modelInput":{"max_tokens":5,"messages":[{"role":"user","content":"x"}]}}]}';
      await stageCompatRequests(h.db.database, {
        batchId: id,
        ...lease,
        requests: positions.map((i) => ({ batch_id: id, position: i, custom_id: `r${i}`, cargo_id: cargoId(i) })),
        staged: positions.map((i) => ({
          batch_id: id,
          position: i,
          cargo_id: cargoId(i),
          model: 'svc-mock',
          provider: 'mock',
          provider_model: 'svc-mock',
          request,
          request_bytes: request.length,
          metadata: JSON.stringify({ batch_id: id, custom_id: `r${i}` }),
          reserved_nusd: 0,
          created_at: clock.now(),
        })),
      });
      await beginCompatPublish(h.db.database, {
        batchId: id,
        projectId,
        ...lease,
        now: clock.now(),
        requestCount: 5,
        bytes: 5 * request.length,
        reservedNusd: 0,
      });
      const step = {
        batchId: id,
        ...lease,
        now: clock.now(),
        resultTtlSeconds: 3600,
        chunk: { rows: 2, bytes: 1 << 20 },
      };
      assert.equal(await publishCompatChunk(h.db.database, step), 2);
      // The publisher dies here: two cargo exist, three are staged, the batch is not visible yet.
      const headers = { 'x-api-key': key };
      assert.equal((await h.app.request('GET', `/v1/messages/batches/${id}`, { headers })).status, 404);
      assert.equal(await count('cargo'), 2);
      await w.runUntilIdle();
      assert.equal(await count('cargo'), 2, 'not taken over while the lease runs');
      assert.equal(
        await deleteCompatBatch(h.db.database, id, { kind: 'abandoned' }, clock.now() + 120_000),
        false,
        'a committed batch is never deleted as abandoned',
      );

      clock.advance(61_000);
      await w.runUntilIdle();
      const batch = await h.app.request('GET', `/v1/messages/batches/${id}`, { headers });
      assert.equal(batch.status, 200);
      assert.equal(batch.body.request_counts.processing + batch.body.request_counts.succeeded, 5);
      assert.equal(await count('cargo'), 5, 'every request a cargo, none twice');
      assert.equal(await count('compat_cargo'), 5);
      assert.equal(await count('compat_staged_cargo'), 0);
      // The old publisher wakes up: its lease is gone, it changes nothing.
      await assert.rejects(publishCompatChunk(h.db.database, step), CompatLeaseLost);
      assert.equal(await count('cargo'), 5);

      // The counts live on the batch's row, moved as each result is stored (here by the cancel).
      const canceled = await h.app.request('POST', `/v1/messages/batches/${id}/cancel`, { headers });
      assert.equal(canceled.body.processing_status, 'ended');
      assert.deepEqual(canceled.body.request_counts, {
        processing: 0,
        succeeded: 0,
        errored: 0,
        canceled: 5,
        expired: 0,
      });
      const row = await h.db.database.read
        .selectFrom('compat_batches')
        .select(['canceled', 'last_result_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...row, canceled: Number(row.canceled) }, { canceled: 5, last_result_at: clock.now() });
    });

    test('a cancel recorded but not done is seen through; batches and files go at the end of their retention', async () => {
      const { worker: w } = await worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = new OpenAI({ apiKey: key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
      const lines = ['a', 'b'].map((id) =>
        JSON.stringify({
          custom_id: id,
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: 'svc-mock', messages: [{ role: 'user', content: id }] },
        }),
      );
      const file = await sdk.files.create({
        file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'),
        purpose: 'batch',
      });
      const batch = await sdk.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      // The process that took the cancel died right after recording it.
      await requestCompatCancel(h.db.database, batch.id, clock.now());
      assert.equal((await sdk.batches.retrieve(batch.id)).status, 'cancelling');
      await w.runUntilIdle();
      assert.equal(
        (await sdk.batches.retrieve(batch.id)).status,
        'cancelling',
        'within the lease the cancel may still be running',
      );
      clock.advance(2 * 60_000);
      await w.runUntilIdle();
      const cancelled = await sdk.batches.retrieve(batch.id);
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.error_file_id !== null, true);

      clock.advance(BATCH_RETENTION_MS);
      await w.runUntilIdle();
      await assert.rejects(sdk.batches.retrieve(batch.id), OpenAI.NotFoundError);
      await assert.rejects(sdk.files.retrieve(file.id), OpenAI.NotFoundError);
      await assert.rejects(sdk.files.retrieve(cancelled.error_file_id as string), OpenAI.NotFoundError);
      const cargo = await h.app.request('GET', '/cargo', { headers: { 'x-api-key': key } });
      assert.equal(cargo.body.data.length, 2, 'its cargo stay, under their own retention');
    });
  });
}
