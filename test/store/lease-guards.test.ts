/**
 * The state moves that must hold under concurrency, each reproduced as it went wrong before the
 * store had one SQL path: an attempt recorded for a delivery whose lease changed hands, a
 * redelivery overwritten by a settle, a second delivery for a result stored twice, and a job a
 * provider accepted after the lease lapsed left running unwatched. The interleavings are made
 * with a second PostgreSQL connection holding row locks (SQLite has one writer: there the same
 * tests check the sequential outcome).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ManualClock } from '../../src/domain/clock.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_BUDGET_BYTES, ProviderBudgets } from '../../src/pipeline/byte-budget.js';
import { submitBatch } from '../../src/pipeline/submitter.js';
import { noMetrics, silentLogger } from '../../src/ports.js';
import type { JobRef, Provider } from '../../src/providers/provider.js';
import { claimDueBatches } from '../../src/store/batches/due.js';
import { formBatch } from '../../src/store/batches/form.js';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { recordAttempts } from '../../src/store/deliveries/record-attempts.js';
import { createRedelivery } from '../../src/store/deliveries/redeliver.js';
import { LeaseLostError } from '../../src/store/leases.js';
import { type AwaitingCargo, cargoAwaitingResults } from '../../src/store/results/awaiting.js';
import { type NewResult, storeResults } from '../../src/store/results/store.js';
import { usageByDay } from '../../src/store/results/usage.js';
import { leaseAllDue } from '../delivery/webhook-support.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';

const T0 = Date.UTC(2026, 0, 1);

for (const backend of await backends()) {
  describe(`lease guards and state moves on ${backend.name}`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await backend.create();
    });
    after(async () => {
      await db.drop();
    });

    /** Inserts one cargo row in status `batched`, in a batch leased by `workerId`. */
    async function cargoInLeasedBatch(workerId: string, callbackUrl: string | null = null) {
      const { projectId } = await createProjectWithKey(db.database);
      const cargoId = newId('crg', T0);
      const batchId = newId('bat', T0);
      await insertCargo(db.database, [
        pendingCargoRow(projectId, {
          now: T0,
          id: cargoId,
          provider: 'lease-test',
          provider_model: batchId,
          maxTokens: 8,
          callback_url: callbackUrl,
        }),
      ]);
      const formed = await formBatch(db.database, {
        batchId,
        provider: 'lease-test',
        providerModel: batchId,
        maxRequests: 10,
        maxBytes: 1e6,
        onlyIfFull: false,
        now: T0,
      });
      assert.equal(formed?.cargoCount, 1);
      await db.database.write
        .updateTable('batches')
        .set({ locked_by: workerId, locked_until: T0 + 60_000 })
        .where('id', '=', batchId)
        .execute();
      // As the collector reads it.
      const [cargo] = await cargoAwaitingResults(db.database, batchId);
      assert.ok(cargo);
      return { batchId, cargo };
    }

    const result = (cargo: AwaitingCargo): NewResult => ({
      cargo,
      success: true,
      response: '{"id":"msg_1"}',
      errorMessage: null,
      nextStatus: cargo.channels.length > 0 ? 'callback_pending' : 'completed',
    });

    const deliveriesOf = (cargoId: string) =>
      db.database.read.selectFrom('deliveries').selectAll().where('cargo_id', '=', cargoId).execute();

    test('a result stored twice creates its deliveries once; a collector without the lease writes nothing', async () => {
      const { batchId, cargo } = await cargoInLeasedBatch('w1', 'https://example.com/hook');
      const lease = { batchId, workerId: 'w1' };
      await storeResults(db.database, lease, [result(cargo)], T0);
      await storeResults(db.database, lease, [result(cargo)], T0 + 1);
      assert.equal((await deliveriesOf(cargo.id)).length, 1);

      const other = await cargoInLeasedBatch('w1', 'https://example.com/hook');
      await assert.rejects(
        storeResults(db.database, { batchId: other.batchId, workerId: 'w2' }, [result(other.cargo)], T0),
        LeaseLostError,
      );
      const row = await db.database.read
        .selectFrom('cargo')
        .select('status')
        .where('id', '=', other.cargo.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'batched');
      assert.equal((await deliveriesOf(other.cargo.id)).length, 0);
    });

    test('a result answered twice in one collect is stored, counted in usage and delivered once', async () => {
      const { batchId, cargo } = await cargoInLeasedBatch('w1', 'https://example.com/hook');
      const twice: NewResult = {
        ...result(cargo),
        usage: {
          inputTokens: 5,
          outputTokens: 7,
          cacheCreationTokens: 0,
          cacheCreation1hTokens: 0,
          cacheReadTokens: 0,
          costUsd: null,
          standardCostUsd: null,
        },
      };
      await storeResults(db.database, { batchId, workerId: 'w1' }, [twice, twice], T0);
      assert.equal((await deliveriesOf(cargo.id)).length, 1);
      const day = Math.floor(T0 / 86_400_000);
      const usage = await usageByDay(db.database, cargo.projectId, { fromDay: day, toDay: day });
      assert.deepEqual(
        usage.map((u) => [u.cargo, u.input_tokens, u.output_tokens]),
        [[1, 5, 7]],
      );
    });

    /** A stored result with one pending webhook delivery, leased by `workerId`; returns its ids. */
    async function leasedDelivery(workerId: string) {
      const { batchId, cargo } = await cargoInLeasedBatch('collector', 'https://example.com/hook');
      await storeResults(db.database, { batchId, workerId: 'collector' }, [result(cargo)], T0);
      const [due] = await leaseAllDue(db.database, { workerId, now: T0, leaseMs: 60_000, limit: 1000 });
      const mine = (await deliveriesOf(cargo.id))[0];
      assert.equal(mine?.locked_by, workerId, JSON.stringify(due));
      return { cargoId: cargo.id, deliveryId: mine?.id as string };
    }

    const delivered = (deliveryId: string, workerId: string, now: number) => ({
      deliveryId,
      workerId,
      now,
      verdict: { kind: 'delivered' as const },
      attempt: {
        trigger: 'result',
        started_at: now,
        duration_ms: 5,
        status_code: 200,
        error_class: null,
        error_detail: null,
        response_excerpt: null,
      },
    });

    test('an attempt whose lease changed hands while it was recorded is dropped', async () => {
      const { deliveryId } = await leasedDelivery('worker-a');
      const attempts = () =>
        db.database.read.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).execute();
      if (backend.name !== 'postgres') {
        await db.database.write
          .updateTable('deliveries')
          .set({ locked_by: 'worker-b' })
          .where('id', '=', deliveryId)
          .execute();
        await recordAttempts(db.database, [delivered(deliveryId, 'worker-a', T0 + 10)]);
        assert.equal((await attempts()).length, 0);
        return;
      }
      // Worker B takes the delivery over in a transaction still open while A records.
      const other = new pg.Client({ connectionString: db.url });
      await other.connect();
      try {
        await other.query('begin');
        await other.query(`update deliveries set locked_by = 'worker-b' where id = $1`, [deliveryId]);
        const recording = recordAttempts(db.database, [delivered(deliveryId, 'worker-a', T0 + 10)]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query('commit');
        await recording;
      } finally {
        await other.end();
      }
      assert.deepEqual(await attempts(), [], 'no attempt row for a lease A no longer held');
      const row = await db.database.read
        .selectFrom('deliveries')
        .selectAll()
        .where('id', '=', deliveryId)
        .executeTakeFirstOrThrow();
      assert.equal(row.locked_by, 'worker-b');
      assert.equal(row.status, 'pending');
    });

    test('a redelivery committed while a settle waited is not overwritten', async () => {
      const { cargoId, deliveryId } = await leasedDelivery('worker-a');
      const status = async () =>
        (
          await db.database.read
            .selectFrom('cargo')
            .select('status')
            .where('id', '=', cargoId)
            .executeTakeFirstOrThrow()
        ).status;
      if (backend.name !== 'postgres') {
        await recordAttempts(db.database, [delivered(deliveryId, 'worker-a', T0 + 10)]);
        assert.equal(await status(), 'callback_delivered');
        assert.deepEqual(await createRedelivery(db.database, cargoId, T0 + 20), { channels: ['webhook'] });
        assert.equal(await status(), 'callback_pending');
        return;
      }
      // An operator's redelivery holds the cargo row while the attempt is recorded and settled.
      const other = new pg.Client({ connectionString: db.url });
      await other.connect();
      try {
        await other.query('begin');
        await other.query(`update cargo set updated_at = updated_at where id = $1`, [cargoId]);
        const recording = recordAttempts(db.database, [delivered(deliveryId, 'worker-a', T0 + 10)]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query(
          `insert into deliveries (id, cargo_id, channel, status, attempts, next_attempt_at, trigger, created_at, updated_at)
           values ($1, $2, 'webhook', 'pending', 0, $3, 'redeliver', $3, $3)`,
          [newId('dlv', T0 + 20), cargoId, T0 + 20],
        );
        await other.query(`update cargo set status = 'callback_pending' where id = $1`, [cargoId]);
        await other.query('commit');
        await recording;
      } finally {
        await other.end();
      }
      assert.equal(await status(), 'callback_pending', 'the redelivery in progress keeps its status');
    });

    test('a job accepted after the lease lapsed is kept, and the duplicate of a worker that took over is canceled', async () => {
      const clock = new ManualClock(T0);
      const gates: (() => void)[] = [];
      const canceled: string[] = [];
      let submits = 0;
      const provider: Provider = {
        name: 'lease-test',
        limits: {
          maxRequests: 100,
          maxBytes: 1e6,
          minRequests: 1,
          completionWindowMs: 86_400_000,
          defaultMaxWaitMs: 0,
        },
        async submit() {
          const jobId = `job-${++submits}`;
          await new Promise<void>((resolve) => gates.push(resolve));
          return { kind: 'submitted', jobId, state: null } as const;
        },
        // The open call's job is not visible yet when B looks for it.
        async findSubmitted() {
          return [];
        },
        async status() {
          return { state: 'running', expectedEndAt: null } as const;
        },
        async *results() {},
        async cancel(job: JobRef) {
          canceled.push(job.jobId);
        },
        async cleanup() {},
        async check() {
          return [];
        },
      };
      const { batchId } = await cargoInLeasedBatch('nobody');
      await db.database.write
        .updateTable('batches')
        .set({ locked_by: null, locked_until: null, next_check_at: T0 })
        .where('id', '=', batchId)
        .execute();
      const ctx = (workerId: string) => ({
        database: db.database,
        clock,
        providers: new Map([[provider.name, provider]]),
        settings: {
          batchMaxSize: 100,
          batchMaxWaitMs: null,
          leaseMs: 1000,
          concurrency: 4,
          providerConcurrency: 4,
          purgeChunk: 100,
        },
        workerId,
        log: silentLogger,
        metrics: noMetrics,
        budgets: {
          submissions: new ProviderBudgets(DEFAULT_BUDGET_BYTES),
          collections: new ProviderBudgets(DEFAULT_BUDGET_BYTES),
        },
        prices: () => null,
      });
      const claim = (workerId: string) =>
        claimDueBatches(db.database, { status: 'submitting', workerId, now: clock.now(), leaseMs: 1000, limit: 10 });

      const [forA] = (await claim('worker-a')).filter((b) => b.id === batchId);
      assert.ok(forA);
      const a = submitBatch(ctx('worker-a'), forA);
      // A's call to the provider stays open past its lease; B takes the batch over and submits too.
      while (gates.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
      clock.advance(1500);
      const [forB] = (await claim('worker-b')).filter((b) => b.id === batchId);
      assert.ok(forB, 'the lapsed lease lets worker B claim the batch');
      const b = submitBatch(ctx('worker-b'), forB);
      while (gates.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      gates[0]?.();
      await a;
      gates[1]?.();
      await b;

      const row = await db.database.read
        .selectFrom('batches')
        .selectAll()
        .where('id', '=', batchId)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'processing');
      assert.equal(row.job_id, 'job-1', "A's job, accepted first, is the batch's job");
      assert.deepEqual(canceled, ['job-2'], "B's duplicate is canceled, not left running");
    });
  });
}
