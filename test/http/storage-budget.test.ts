/**
 * The per-project storage budget and the disk guard, over HTTP: a project past its bytes per UTC
 * day or its bytes held gets 429 with a `detail` and Retry-After; held bytes fall when results
 * are purged; the counters agree with a full recount of the tables, also after two API processes
 * submitted concurrently; and a service short of storage answers 503 before reading the body.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { ManualClock } from '../../src/domain/clock.js';
import { setStorageBudget } from '../../src/operations/set-storage-budget.js';
import type { Database } from '../../src/store/database.js';
import type { Schema } from '../../src/store/schema.js';
import { readStorageUsage } from '../../src/store/storage-usage.js';
import { createProjectWithKey, mockBody, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { testWorker } from '../helpers/pipeline.js';
import { sleep } from '../helpers/wait.js';

/** What a project holds by definition, counted the slow way (the counters must agree). */
async function recount(db: Kysely<Schema>, dialect: Database['dialect'], projectId: string): Promise<number> {
  const len = (expr: string) =>
    dialect === 'postgres' ? `coalesce(octet_length(${expr}), 0)` : `coalesce(length(cast(${expr} as blob)), 0)`;
  const metadata = dialect === 'postgres' ? 'coalesce(octet_length(q.metadata), 0)' : 'coalesce(length(q.metadata), 0)';
  const { rows } = await sql<{ held: string | number | null }>`select sum(${sql.raw(metadata)}
      + case when r.purged_at is null
        then c.request_bytes + ${sql.raw(len('r.response'))} + ${sql.raw(len('r.error_message'))} else 0 end) as held
      from cargo c join cargo_requests q on q.cargo_id = c.id left join results r on r.cargo_id = c.id
      where c.project_id = ${projectId}`.execute(db);
  return Number(rows[0]?.held ?? 0);
}

async function cargoBytes(database: Database, cargoId: string): Promise<number> {
  const row = await database.write
    .selectFrom('cargo as c')
    .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
    .select(['c.request_bytes', 'q.metadata'])
    .where('c.id', '=', cargoId)
    .executeTakeFirstOrThrow();
  return Number(row.request_bytes) + (row.metadata?.length ?? 0);
}

for (const backend of await backends()) {
  describe(`the storage budget on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    // Noon UTC: the daily budget renews at midnight, 12 hours on.
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, { clock });
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    const deps = () => ({ database: db.database, clock });
    const submit = (key: string, content = 'hello', extra: Record<string, unknown> = {}) =>
      app.request('POST', '/cargo/load', { key, body: mockBody(content, extra) });

    test('past its bytes per UTC day a project gets 429 with detail and Retry-After until midnight UTC', async () => {
      const { key, slug, projectId } = await createProjectWithKey(db.database);
      const first = await submit(key);
      assert.equal(first.status, 200, first.text);
      const size = await cargoBytes(db.database, first.body.cargo_id);
      // Room for two more of the same size, not three.
      assert.ok((await setStorageBudget(deps(), { slug, dailyBytes: size * 3 + size / 2 })).ok);

      let accepted = 1;
      let refused: Awaited<ReturnType<typeof submit>> | undefined;
      for (let i = 0; i < 10 && !refused; i++) {
        const res = await submit(key);
        if (res.status === 200) accepted++;
        else refused = res;
      }
      assert.equal(accepted, 3);
      assert.ok(refused);
      assert.equal(refused.status, 429, refused.text);
      assert.match(refused.body.detail, /storage budget of \d+ bytes accepted per day \(UTC\)/);
      assert.equal(refused.headers.get('retry-after'), String(12 * 3600));
      assert.equal((await readStorageUsage(db.database, projectId)).dayBytes, size * 3);

      // A new UTC day renews it; the bytes still held do not count against the day.
      clock.advance(12 * 3600 * 1000);
      assert.equal((await submit(key)).status, 200);
      // Another project is not affected by this one's budget.
      const other = await createProjectWithKey(db.database);
      assert.equal((await submit(other.key)).status, 200);
    });

    test('past its bytes held a project gets 429; purged results free the budget again', async () => {
      const { key, slug, projectId } = await createProjectWithKey(db.database);
      const { worker } = await testWorker(db.database, clock, { latencyMs: 0 });
      try {
        const first = await submit(key, 'held', { result_ttl_seconds: 3600, metadata: { order: 'A-1' } });
        assert.equal(first.status, 200, first.text);
        clock.advance(500);
        await worker.runUntilIdle();
        const usage = await readStorageUsage(db.database, projectId);
        assert.equal(usage.heldBytes, await recount(db.database.read, db.database.dialect, projectId));
        assert.ok(usage.heldBytes > (await cargoBytes(db.database, first.body.cargo_id)), 'the result counts');

        // Exactly what it holds now: nothing more fits.
        assert.ok((await setStorageBudget(deps(), { slug, heldBytes: usage.heldBytes, dailyBytes: 1e12 })).ok);
        await settleBudgetCache();
        const refused = await submit(key);
        assert.equal(refused.status, 429, refused.text);
        assert.match(refused.body.detail, /holds its storage budget of \d+ bytes/);
        assert.ok(Number(refused.headers.get('retry-after')) > 0);

        // The result expires and is purged: the request and the result are released, the
        // metadata (kept for the mailbox's 410) stays.
        clock.advance(3600 * 1000 + 1);
        await worker.runUntilIdle();
        const after = await readStorageUsage(db.database, projectId);
        assert.equal(after.heldBytes, await recount(db.database.read, db.database.dialect, projectId));
        assert.equal(after.heldBytes, '{"order":"A-1"}'.length);
        await settleBudgetCache();
        assert.equal((await submit(key)).status, 200);
      } finally {
        await worker.close();
      }
    });

    test('the counters agree with a recount after two API processes submitted concurrently', async () => {
      if (backend.name === 'sqlite-memory') return; // one connection: a second process cannot share it
      const second = await startTestApp(db.database, { clock });
      try {
        const projects = await Promise.all([1, 2, 3].map(() => createProjectWithKey(db.database)));
        const results = await Promise.all(
          Array.from({ length: 120 }, (_, i) => {
            const target = i % 2 === 0 ? app : second;
            const project = projects[i % 3] as (typeof projects)[number];
            return target.request('POST', '/cargo/load', {
              key: project.key,
              body: mockBody(`c${i}`.repeat(1 + (i % 7)), i % 5 === 0 ? { metadata: { i } } : {}),
            });
          }),
        );
        assert.deepEqual(new Set(results.map((r) => r.status)), new Set([200]));
        for (const { projectId } of projects) {
          const usage = await readStorageUsage(db.database, projectId);
          assert.equal(usage.heldBytes, await recount(db.database.read, db.database.dialect, projectId));
          assert.equal(usage.dayBytes, usage.heldBytes);
        }
      } finally {
        await second.close();
      }
    });
  });
}

for (const backend of await backends()) {
  if (backend.name === 'sqlite-memory') continue; // in memory there is no disk to guard
  describe(`the disk guard on ${backend.name}`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await backend.create();
    });
    after(() => db.drop());

    test('a service short of storage refuses new cargo with 503, detail and Retry-After; tracking still answers', async () => {
      const storage = {
        dailyBytes: 1e12,
        heldBytes: 1e12,
        checkMs: 1000,
        // SQLite: more free space than any disk has; PostgreSQL: a database larger than 1 byte.
        minFreeDiskBytes: Number.MAX_SAFE_INTEGER,
        maxDatabaseBytes: 1,
      };
      const app = await startTestApp(db.database, { config: { storage } });
      try {
        const { key } = await createProjectWithKey(db.database);
        const res = await app.request('POST', '/cargo/load', { key, body: mockBody('no room') });
        assert.equal(res.status, 503, res.text);
        assert.deepEqual(Object.keys(res.body), ['detail']);
        assert.match(res.body.detail, /low on storage/);
        assert.equal(res.headers.get('retry-after'), '60');
        const tracking = await app.request('GET', `/cargo/crg_${'0'.repeat(26)}/tracking`, { key });
        assert.equal(tracking.status, 404);
      } finally {
        await app.close();
      }
      const roomy = await startTestApp(db.database, {
        config: { storage: { ...storage, minFreeDiskBytes: 0, maxDatabaseBytes: 1e15 } },
      });
      try {
        const { key } = await createProjectWithKey(db.database);
        assert.equal((await roomy.request('POST', '/cargo/load', { key, body: mockBody('room') })).status, 200);
      } finally {
        await roomy.close();
      }
    });
  });
}

/** The budget's view of a project is at most BARGE_STORAGE_CHECK_MS (1 s) old; wait it out. */
const settleBudgetCache = () => sleep(1100);
