/**
 * Two `barge serve --role worker` processes share one PostgreSQL schema while 20,000 cargo arrive.
 * PostgreSQL only: SQLite is one process by design. Under CI=true backends() fails when PostgreSQL
 * is unreachable; elsewhere the suite is simply not generated without it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { newCargoNotice } from '../../src/store/notify.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const TOTAL = 20_000;
const CHUNK = 1_000;
const BATCH_MAX_SIZE = 500;

const cargoRow = (projectId: string, n: number, now: number) =>
  pendingCargoRow(projectId, { now, content: `cargo number ${n}`, result_ttl_seconds: 2_592_000 });

const postgres = (await backends({ childProcesses: true })).find((b) => b.name === 'postgres');

if (postgres) {
  describe('two worker processes on one PostgreSQL schema', () => {
    let db: TestDatabase;
    const workers: BargeProcess[] = [];

    before(async () => {
      assertBuildIsFresh();
      db = await postgres.create();
    });

    after(async () => {
      for (const worker of workers) {
        if (worker.alive) {
          worker.child.kill('SIGKILL');
          await worker.exited;
        }
      }
      await db?.drop();
    });

    test('20,000 cargo: each batched once, submitted once, completed once', async (t) => {
      const started = Date.now();
      const sqlDb = db.database.write;
      const { projectId } = await createProjectWithKey(db.database);

      for (const name of ['w1', 'w2']) {
        workers.push(
          new BargeProcess(['serve', '--role', 'worker', '--json'], {
            BARGE_DATABASE_URL: db.url,
            BARGE_ENV: 'production',
            BARGE_LOG_LEVEL: 'info',
            BARGE_MOCK_LATENCY_MS: '0',
            BARGE_BATCH_MAX_SIZE: String(BATCH_MAX_SIZE),
            BARGE_WORKER_ID: `multi-worker-test-${name}`,
          }),
        );
      }
      for (const worker of workers) assert.deepEqual(await worker.started(), { role: 'worker', url: null });

      for (let i = 0; i < TOTAL; i += CHUNK) {
        const now = Date.now();
        const rows = Array.from({ length: CHUNK }, (_, k) => cargoRow(projectId, i + k, now));
        await insertCargo(db.database, rows);
        await db.database.writeAll(newCargoNotice(db.database));
      }
      t.diagnostic(`inserted ${TOTAL} cargo after ${Date.now() - started} ms`);

      await waitFor(
        `all ${TOTAL} cargo completed`,
        async () => {
          const rows = await sqlDb
            .selectFrom('cargo')
            .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
            .groupBy('status')
            .execute();
          return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
        },
        (byStatus) => byStatus.completed === TOTAL,
        { timeoutMs: 45_000, intervalMs: 200 },
      );
      t.diagnostic(`all completed after ${Date.now() - started} ms`);

      const exits = await Promise.all(workers.map((w) => w.stop('SIGTERM')));
      for (const [i, exit] of exits.entries()) {
        assert.deepEqual(exit, { code: 0, signal: null }, `worker ${i + 1} stderr:\n${workers[i]?.stderr}`);
      }

      // One result per cargo.
      const results = await sqlDb
        .selectFrom('results')
        .select([(eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('success').as('ok')])
        .executeTakeFirstOrThrow();
      assert.equal(Number(results.n), TOTAL);
      assert.equal(Number(results.ok), TOTAL);

      // Every cargo in exactly one existing batch; each batch's cargo_count is what it holds.
      const cargo = await sqlDb.selectFrom('cargo').select(['id', 'batch_id']).execute();
      assert.equal(cargo.length, TOTAL);
      const perBatch = new Map<string, number>();
      for (const c of cargo) {
        assert.ok(c.batch_id, `cargo ${c.id} has no batch`);
        perBatch.set(c.batch_id, (perBatch.get(c.batch_id) ?? 0) + 1);
      }
      const batches = await sqlDb.selectFrom('batches').selectAll().execute();
      assert.equal(batches.length, perBatch.size, 'every batch holds cargo and every batch_id names a batch');
      for (const batch of batches) {
        assert.equal(batch.cargo_count, perBatch.get(batch.id), `batch ${batch.id} cargo_count`);
        assert.ok(batch.cargo_count <= BATCH_MAX_SIZE, `batch ${batch.id} holds ${batch.cargo_count}`);
        assert.equal(batch.status, 'ended', `batch ${batch.id}`);
        assert.equal(batch.locked_by, null, `batch ${batch.id} still leased after SIGTERM`);
      }

      // svc-mock received each cargo exactly once, each in the job of its own batch: one job per
      // batch (never recorded twice), as many requests as the batch has cargo.
      const jobs = batches.filter((b) => b.job_id !== null);
      assert.equal(jobs.length, batches.length, 'every batch has its job');
      assert.equal(new Set(jobs.map((j) => j.job_id)).size, jobs.length, 'no job serves two batches');
      const requestSum = jobs.reduce((n, j) => n + j.request_count + j.padding_count, 0);
      assert.equal(requestSum, TOTAL, 'requests sent to svc-mock');
      const cargoOfBatch = new Map<string, number>();
      for (const c of cargo) cargoOfBatch.set(c.batch_id as string, (cargoOfBatch.get(c.batch_id as string) ?? 0) + 1);
      for (const job of jobs) assert.equal(job.request_count, cargoOfBatch.get(job.id), `batch ${job.id}`);

      // Both workers did the work: each child's own "batch formed" log lines, which add up to the
      // batches in the database.
      const formedBy = workers.map((w) =>
        w
          .jsonLines()
          .filter((l) => l.msg === 'batch formed')
          .map((l) => l.batch as string),
      );
      t.diagnostic(`batches formed per worker: ${formedBy.map((f) => f.length).join(', ')} of ${batches.length}`);
      for (const [i, formed] of formedBy.entries()) assert.ok(formed.length > 0, `worker ${i + 1} formed no batch`);
      assert.deepEqual(
        formedBy.flat().sort(),
        batches.map((b) => b.id).sort(),
        'the batches the workers logged are exactly those stored',
      );
      t.diagnostic(`done after ${Date.now() - started} ms`);
    });
  });
}
