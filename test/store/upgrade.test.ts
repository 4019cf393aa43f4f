/** Upgrading databases that hold data, on every backend: no cargo is lost, rows from before usage get 0 tokens, and usage moves into its per-day rows. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { ManualClock } from '../../src/domain/clock.js';
import { newId } from '../../src/domain/ids.js';
import { ALL_CARGO_STATUSES as LIVE_STATUSES } from '../../src/domain/lifecycle.js';
import { usageReport } from '../../src/operations/usage.js';
import { findCargoForProject } from '../../src/store/cargo/find-for-project.js';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { listCargo } from '../../src/store/cargo/list.js';
import type { Database } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { usageByDay } from '../../src/store/results/usage.js';
import { readStorageUsage } from '../../src/store/storage-usage.js';
import { createProjectWithKey, storedCargo } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';
import { testWorker } from '../helpers/pipeline.js';

/**
 * A database of the schema before narrow cargo rows (migrations through 007), holding cargo in
 * every status with requests, metadata, results, deliveries and svc-mock jobs, upgrades without
 * losing a cargo: every request and metadata text is carried over byte for byte, and the service
 * works on the upgraded data (a pending cargo of the old schema goes through the pipeline).
 */
const BEFORE = '007_storage_budget';
const T0 = Date.UTC(2026, 10, 23, 12);

// The statuses an old database can hold: `canceled` came with migration 017.
const ALL_CARGO_STATUSES = LIVE_STATUSES.filter((status) => status !== 'canceled');

for (const backend of await backends()) {
  describe(`upgrading a database with data on ${backend.name}`, () => {
    test('every cargo, its request and metadata, and its result survive the narrow-rows migration', async () => {
      const db = await backend.create({ migrateThrough: BEFORE });
      try {
        // The schema as it was: raw rows, with the columns that migration moves.
        const old = db.database.write as unknown as Kysely<any>;
        const { projectId } = await createProjectWithKey(db.database, { now: T0 });
        const batchId = newId('bat', T0);
        await old
          .insertInto('batches')
          .values({
            id: batchId,
            provider: 'mock',
            provider_model: 'svc-mock',
            status: 'ended',
            job_id: 'job_old',
            cargo_count: ALL_CARGO_STATUSES.length,
            request_count: ALL_CARGO_STATUSES.length,
            padding_count: 0,
            request_bytes: 100,
            created_at: T0,
            submitted_at: T0,
            deadline_at: T0 + 86_400_000,
            next_check_at: T0,
            canceled_at: null,
            ended_at: T0,
            end_reason: 'ended',
            locked_by: null,
            locked_until: null,
            last_error: null,
            updated_at: T0,
          })
          .execute();
        await old
          .insertInto('mock_jobs')
          .values({
            id: 'job_old',
            batch_id: batchId,
            model: 'svc-mock',
            input: '{"custom_id":"x","params":{}}',
            request_count: 1,
            created_at: T0,
            ends_at: T0,
            canceled_at: null,
          })
          .execute();
        const rows = ALL_CARGO_STATUSES.map((status, i) => ({
          id: newId('crg', T0 + i),
          project_id: projectId,
          status,
          model: 'svc-mock',
          provider: 'mock',
          provider_model: 'svc-mock',
          // Text the API would never write itself: it must come back exactly as stored.
          request: `{"requests":[{"modelInput":{"max_tokens":${i + 1},"messages":[{"role":"user","content":"upgrade ${status} é"}]}}]}`,
          request_count: 1,
          is_records: 0,
          request_bytes: 100,
          metadata: i % 2 === 0 ? `{"2":"two","big":12345678901234567890,"s":"${status}"}` : null,
          result_ttl_seconds: 3600,
          callback_url: status.startsWith('callback') ? 'https://example.com/hook' : null,
          callback: null,
          created_at: T0 + i,
          updated_at: T0 + i,
          batch_id: status === 'pending' ? null : batchId,
        }));
        await old.insertInto('cargo').values(rows).execute();
        const finished = rows.filter((r) => !['pending', 'batched', 'processing'].includes(r.status));
        await old
          .insertInto('results')
          .values(
            finished.map((r) => ({
              cargo_id: r.id,
              success: 1,
              response: `{"id":"msg_${r.id}"}`,
              error_message: null,
              created_at: T0,
              expires_at: T0 + 3_600_000,
              purged_at: null,
            })),
          )
          .execute();

        // What the project holds: its counter row and the change rows the results' triggers added.
        const held = await old
          .selectFrom('project_storage')
          .select('held_bytes')
          .where('project_id', '=', projectId)
          .executeTakeFirst();
        const changes = await old
          .selectFrom('storage_changes')
          .select((eb) => eb.fn.coalesce(eb.fn.sum('bytes'), eb.lit(0)).as('sum'))
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow();
        const heldBefore = Number(held?.held_bytes ?? 0) + Number(changes.sum);
        assert.ok(heldBefore > 0, 'the results added change rows');

        const report = await migrate(db.database);
        assert.ok(report.applied.includes('009_narrow_cargo'), JSON.stringify(report));
        // SQLite folds the change rows into the counter (migration 018): nothing is lost.
        assert.equal((await readStorageUsage(db.database, projectId)).heldBytes, heldBefore);

        for (const row of rows) {
          const stored = await storedCargo(db.database, row.id);
          assert.equal(stored.status, row.status);
          assert.equal(stored.request, row.request, `the request of the ${row.status} cargo`);
          assert.equal(stored.metadata, row.metadata, `the metadata of the ${row.status} cargo`);
          assert.equal(stored.batch_id, row.batch_id);
          const view = await findCargoForProject(db.database, projectId, row.id);
          assert.equal(view?.metadata, row.metadata);
          assert.equal(view?.result?.response ?? null, finished.includes(row) ? `{"id":"msg_${row.id}"}` : null);
        }
        // svc-mock's job moved onto its batch as the provider state.
        const batch = await db.database.read
          .selectFrom('batches')
          .select(['job_id', 'provider_state', 'submit_started_at', 'refusals'])
          .where('id', '=', batchId)
          .executeTakeFirstOrThrow();
        assert.deepEqual(batch, {
          job_id: 'job_old',
          provider_state: `{"endsAt":${T0}}`,
          submit_started_at: null,
          refusals: 0,
        });

        // The pending cargo of the old schema goes through the upgraded pipeline.
        const pending = rows.find((r) => r.status === 'pending');
        assert.ok(pending);
        const clock = new ManualClock(T0 + 60_000);
        const { worker } = await testWorker(db.database, clock, { latencyMs: 0 });
        clock.advance(1000);
        await worker.runUntilIdle();
        clock.advance(1000);
        await worker.runUntilIdle();
        const done = await findCargoForProject(db.database, projectId, pending.id);
        assert.equal(done?.status, 'completed');
        assert.match(done?.result?.response ?? '', /"role":"assistant"/);
        await worker.close();
      } finally {
        await db.drop();
      }
    });

    test('results, records and batches stored before usage was recorded get 0 tokens, null costs and their project', async () => {
      const db = await backend.create({ migrateThrough: '009_narrow_cargo' });
      try {
        const old = db.database.write as unknown as Kysely<any>;
        const { projectId } = await createProjectWithKey(db.database, { now: T0 });
        const cargoId = newId('crg', T0);
        await old
          .insertInto('cargo')
          .values({
            id: cargoId,
            project_id: projectId,
            status: 'completed',
            model: 'svc-mock',
            provider: 'mock',
            provider_model: 'svc-mock',
            request_count: 1,
            is_records: 0,
            request_bytes: 10,
            result_ttl_seconds: 3600,
            created_at: T0,
            updated_at: T0,
          })
          .execute();
        await old
          .insertInto('results')
          .values({ cargo_id: cargoId, success: 1, response: '{}', created_at: T0, expires_at: T0 + 3_600_000 })
          .execute();
        await old
          .insertInto('record_results')
          .values({ cargo_id: cargoId, record_index: 0, success: 1, body: '{}' })
          .execute();

        const report = await migrate(db.database);
        // Those three, then whatever came after them.
        assert.deepEqual(report.applied.slice(0, 3), ['010_usage', '011_submit_steps', '012_refusals']);
        const result = await db.database.read
          .selectFrom('results')
          .selectAll()
          .where('cargo_id', '=', cargoId)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          [
            result.project_id,
            Number(result.input_tokens),
            Number(result.output_tokens),
            result.cost_usd,
            result.standard_cost_usd,
          ],
          [projectId, 0, 0, null, null],
        );
        const record = await db.database.read.selectFrom('record_results').selectAll().executeTakeFirstOrThrow();
        assert.deepEqual([record.input_tokens, record.output_tokens], [0, 0]);
        // The old result counts in the project's usage, with its cargo and no cost known.
        const usage = await usageReport(
          { database: db.database, clock: new ManualClock(T0) },
          { projectId, from: '2026-11-23', to: '2026-11-23' },
        );
        assert.ok(usage.ok);
        assert.deepEqual(usage.value.totals, {
          cargo: 1,
          requests: 1,
          input_tokens: 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          cost_usd: null,
          standard_cost_usd: null,
          savings_usd: null,
        });
      } finally {
        await db.drop();
      }
    });

    test('the usage stored before the per-day rows is carried into them, a canceled cargo left out', async () => {
      const db = await backend.create({ migrateThrough: '025_compat_counts' });
      try {
        const old = db.database.write as unknown as Kysely<any>;
        const { projectId } = await createProjectWithKey(db.database, { now: T0 });
        const DAY = 86_400_000;
        // [model, status, day, requests, input, output, cache write, cache read, cost, standard cost]
        const stored = [
          ['svc-mock', 'completed', 0, 1, 10, 20, 0, 0, null, null],
          ['svc-mock', 'failed', 0, 3, 0, 0, 0, 0, null, null],
          ['claude-x', 'completed', 0, 1, 100, 50, 7, 3, 0.5, 1],
          ['claude-x', 'completed', 0, 1, 100, 50, 0, 0, null, null],
          ['claude-x', 'completed', 1, 2, 1, 2, 0, 0, 0.25, 0.5],
          ['claude-x', 'canceled', 1, 1, 0, 0, 0, 0, null, null],
        ] as const;
        for (const [
          i,
          [model, status, day, requests, input, output, write, read, cost, standard],
        ] of stored.entries()) {
          const id = newId('crg', T0 + i);
          const at = T0 + day * DAY;
          await old
            .insertInto('cargo')
            .values({
              id,
              project_id: projectId,
              status,
              model,
              provider: 'mock',
              provider_model: model,
              request_count: requests,
              is_records: requests > 1 ? 1 : 0,
              request_bytes: 10,
              result_ttl_seconds: 3600,
              created_at: T0,
              updated_at: at,
            })
            .execute();
          await old
            .insertInto('results')
            .values({
              cargo_id: id,
              success: status === 'completed' ? 1 : 0,
              response: '{}',
              created_at: at,
              expires_at: at + 3_600_000,
              project_id: projectId,
              input_tokens: input,
              output_tokens: output,
              cache_creation_input_tokens: write,
              cache_read_input_tokens: read,
              cost_usd: cost,
              standard_cost_usd: standard,
            })
            .execute();
        }
        assert.deepEqual((await migrate(db.database, { through: '026_usage_days' })).applied, ['026_usage_days']);
        const day0 = Math.floor(T0 / DAY);
        const rows = await usageByDay(db.database, projectId, { fromDay: day0, toDay: day0 + 1 });
        assert.deepEqual(rows, [
          {
            day: day0,
            model: 'claude-x',
            cargo: 2,
            requests: 2,
            input_tokens: 200,
            output_tokens: 100,
            cache_creation_input_tokens: 7,
            cache_read_input_tokens: 3,
            cost_usd: 0.5,
            standard_cost_usd: 1,
          },
          {
            day: day0,
            model: 'svc-mock',
            cargo: 2,
            requests: 4,
            input_tokens: 10,
            output_tokens: 20,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            cost_usd: null,
            standard_cost_usd: null,
          },
          {
            day: day0 + 1,
            model: 'claude-x',
            cargo: 1,
            requests: 2,
            input_tokens: 1,
            output_tokens: 2,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            cost_usd: 0.25,
            standard_cost_usd: 0.5,
          },
        ]);
      } finally {
        await db.drop();
      }
    });

    test('cargo keep their rows, keys and lists through migration 027 (one pending index, SQLite rebuilds the table)', async () => {
      const db = await backend.create({ migrateThrough: '026_usage_days' });
      try {
        const { projectId } = await createProjectWithKey(db.database, { now: T0 });
        const rows = LIVE_STATUSES.map((status, i) =>
          pendingCargoRow(projectId, {
            now: T0 + i,
            status,
            metadata: `{"n":${i}}`,
            idempotency: { key: `key-${i}`, bodySha256: 'a'.repeat(64) },
          }),
        );
        await insertCargo(db.database, rows);
        const all = () => db.database.read.selectFrom('cargo').selectAll().orderBy('id').execute();
        const before = await all();

        assert.deepEqual((await migrate(db.database)).applied, ['027_cheaper_cargo_writes']);
        assert.deepEqual(await all(), before);
        if (db.database.dialect === 'sqlite') {
          const { rows: broken } = await sql`pragma foreign_key_check`.execute(db.database.read);
          assert.deepEqual(broken, []);
        }
        const names = await cargoIndexes(db.database);
        assert.ok(!names.includes('cargo_pending'), names.join());
        for (const name of [
          'cargo_pending_by_project',
          'cargo_batch_order',
          'cargo_by_project',
          'cargo_by_project_rare_status',
        ]) {
          assert.ok(names.includes(name), `${name} in ${names.join()}`);
        }
        // Each status is still listed, the rare ones from their index; the keys still name their cargo.
        for (const [i, status] of LIVE_STATUSES.entries()) {
          const { cargo } = await listCargo(db.database, projectId, { status, limit: 10 });
          assert.deepEqual(
            cargo.map((c) => [c.id, c.metadata]),
            [[rows[i]?.id, `{"n":${i}}`]],
          );
        }
        const keys = await db.database.read.selectFrom('idempotency_keys').select(['key', 'cargo_id']).execute();
        assert.equal(keys.length, rows.length);
        // The CHECK still takes every status and refuses others.
        await assert.rejects(insertCargo(db.database, [pendingCargoRow(projectId, { status: 'lost' as 'pending' })]));
      } finally {
        await db.drop();
      }
    });
  });
}

/** The names of the cargo table's indexes. */
async function cargoIndexes(database: Database): Promise<string[]> {
  const query =
    database.dialect === 'sqlite'
      ? sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'cargo'`
      : sql<{
          name: string;
        }>`select indexname as name from pg_indexes where tablename = 'cargo' and schemaname = current_schema()`;
  const { rows } = await query.execute(database.read);
  return rows.map((r) => r.name);
}
