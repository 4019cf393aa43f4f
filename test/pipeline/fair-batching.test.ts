/**
 * Fair forming, from outside: a model's pending cargo are taken into a batch round robin across
 * projects (each project's oldest first), so one project's backlog never pushes another project's
 * cargo out of the next batch. `barge serve --role worker` processes (two on PostgreSQL) form the
 * batches of cargo written before they start; and a batch the provider's queue cap turned away
 * takes its contents again before it retries, so a later project's cargo rides in the next job.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';
import { serveHarness } from '../helpers/harness.js';
import { oneBatchOf } from '../helpers/held-create.js';
import { loadOverHttp } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const BATCH = 20;
const CREATE_PATH = /^\/v1\/messages\/batches$/;

for (const backend of await backends({ childProcesses: true })) {
  describe(`fair forming on ${backend.name}`, () => {
    const h = serveHarness(backend);

    test(`50 cargo of project A, then 5 of project B, batches of ${BATCH}: B's ride in the first batches formed`, async () => {
      const db = h.db;
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
      const env = { BARGE_BATCH_MAX_SIZE: String(BATCH) };
      await Promise.all(Array.from({ length: count }, () => h.serve('worker', env)));

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

for (const backend of await backends({ childProcesses: true })) {
  describe(`a queue cap answered with 429, on ${backend.name}`, () => {
    const h = serveHarness(backend);
    let anthropic: AnthropicEmulator;
    before(async () => {
      anthropic = await startAnthropicEmulator();
    });
    after(() => anthropic.close());

    test("project A's batch turned away by the queue cap; project B's later cargo rides in the next job started", async () => {
      const creates = () => anthropic.batches();
      const { url } = await h.serveAll({
        ANTHROPIC_API_KEY: anthropic.apiKey,
        ANTHROPIC_BASE_URL: anthropic.url,
        ...oneBatchOf(2),
      });
      const a = await createProjectWithKey(h.db.database);
      const b = await createProjectWithKey(h.db.database);
      const ask = (content: string) => ({
        params: { model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content }] },
      });
      const contentsOf = (batch: { requests: { params: { messages: { content: unknown }[] } }[] }) =>
        batch.requests.map((r) => r.params.messages[0]?.content);

      // A's first job runs; its queue is then full, and the next create is answered 429 for 3 s.
      await loadOverHttp(url, a.key, ask('a 1'));
      await loadOverHttp(url, a.key, ask('a 2'));
      await waitFor('the first job', creates, (jobs) => jobs.length === 1, { timeoutMs: 10_000 });
      anthropic.faults.failNext(1, { method: 'POST', path: CREATE_PATH, status: 429, retryAfterSeconds: 3 });
      const refusedAt = anthropic.log.length;
      await loadOverHttp(url, a.key, ask('a 3'));
      await loadOverHttp(url, a.key, ask('a 4'));
      await waitFor(
        'the second create turned away',
        () => anthropic.log.slice(refusedAt).filter((r) => r.method === 'POST' && r.status === 429).length,
        (n) => n === 1,
        { timeoutMs: 10_000 },
      );
      // B's single cargo arrives while A's batch waits out the cap.
      await loadOverHttp(url, b.key, ask('b 1'));

      const [, next] = await waitFor('the next job', creates, (jobs) => jobs.length === 2, { timeoutMs: 15_000 });
      assert.deepEqual(contentsOf(next as never), ['a 3', 'b 1'], "round robin: A's oldest, then B's");
    });
  });
}
