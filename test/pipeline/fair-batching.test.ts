/**
 * Fair forming, from outside: a model's pending cargo are taken into a batch round robin across
 * projects (each project's oldest first), so one project's backlog never pushes another project's
 * cargo out of the next batch. `barge serve --role worker` processes (two on PostgreSQL) form the
 * batches of cargo written before they start.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const BATCH = 20;

for (const backend of await backends({ childProcesses: true })) {
  describe(`fair forming on ${backend.name}`, () => {
    let db: TestDatabase;
    const workers: BargeProcess[] = [];
    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
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

    test(`50 cargo of project A, then 5 of project B, batches of ${BATCH}: B's ride in the first batches formed`, async () => {
      const a = await createProjectWithKey(db.database);
      const b = await createProjectWithKey(db.database);
      const start = Date.now() - 60_000;
      // A's backlog is older than every cargo of B.
      await insertCargo(
        db.database,
        Array.from({ length: 50 }, (_, i) => pendingCargoRow(a.projectId, { now: start + i, content: `a ${i}` })),
      );
      const late = Array.from({ length: 5 }, (_, i) => pendingCargoRow(b.projectId, { now: start + 1000 + i }));
      await insertCargo(db.database, late);

      // Two workers form at once on PostgreSQL; a SQLite file has one writer.
      const count = backend.name === 'postgres' ? 2 : 1;
      for (let i = 0; i < count; i++) {
        workers.push(
          new BargeProcess(['serve', '--role', 'worker', '--json'], {
            BARGE_DATABASE_URL: db.url,
            BARGE_ENV: 'production',
            BARGE_LOG_LEVEL: 'warn',
            BARGE_MOCK_LATENCY_MS: '0',
            BARGE_BATCH_MAX_SIZE: String(BATCH),
            BARGE_BATCH_MAX_WAIT_MS: '0',
          }),
        );
      }
      for (const worker of workers) await worker.started();

      const read = db.database.read;
      await waitFor(
        'every cargo batched',
        () => read.selectFrom('cargo').select('id').where('batch_id', 'is', null).execute(),
        (rows) => rows.length === 0,
        { timeoutMs: 20_000 },
      );
      const batches = await read
        .selectFrom('batches')
        .select(['id', 'created_at'])
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      assert.equal(batches.length, 3, 'three batches of at most 20');
      // The first batch each worker formed: B's cargo are in them, not in the last batch after A's backlog.
      const first = new Set(batches.slice(0, count).map((x) => x.id));
      const lateRows = await read
        .selectFrom('cargo')
        .select(['id', 'batch_id'])
        .where(
          'id',
          'in',
          late.map((c) => c.id),
        )
        .execute();
      for (const row of lateRows) {
        assert.ok(
          first.has(row.batch_id as string),
          `B's cargo ${row.id} is in batch ${row.batch_id}, formed after A's`,
        );
      }
      // Each batch takes A's cargo oldest first.
      const firstOfA = await read
        .selectFrom('cargo')
        .select(['batch_id'])
        .where('project_id', '=', a.projectId)
        .orderBy('created_at')
        .limit(1)
        .executeTakeFirstOrThrow();
      assert.ok(first.has(firstOfA.batch_id as string), "A's oldest cargo is in a first batch");
    });
  });
}
