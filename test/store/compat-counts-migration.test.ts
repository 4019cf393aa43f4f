/**
 * Migration 025 on a database that already holds an open provider-compatible batch: its cargo's
 * metadata moves to compat_cargo, its counts are counted once from the results stored, and from
 * then on the trigger on `results` moves them as each result is stored, on every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { migrate } from '../../src/store/migrate.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

const T = Date.UTC(2026, 10, 22, 12);

for (const backend of await backends()) {
  describe(`migration 025 on ${backend.name}`, () => {
    test('an open batch keeps its metadata and gets its counts; later results move them', async () => {
      const db = await backend.create({ migrateThrough: '023_compat_batches' });
      try {
        const { database } = db;
        const { projectId } = await createProjectWithKey(database, { now: T });
        const batchId = 'msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c';
        await database.write
          .insertInto('compat_batches')
          .values({
            id: batchId,
            project_id: projectId,
            api: 'anthropic',
            state: 'open',
            request_count: 3,
            created_at: T,
          })
          .execute();
        const cargoIds = [0, 1, 2].map((i) => `crg_01jd5q3k8m9x2v4w6y8z0a1b${i}c`);
        for (const [i, id] of cargoIds.entries()) {
          await database.write
            .insertInto('cargo')
            .values({
              id,
              project_id: projectId,
              status: i < 2 ? 'completed' : 'pending',
              model: 'svc-mock',
              provider: 'mock',
              provider_model: 'svc-mock',
              request_count: 1,
              is_records: 0,
              request_bytes: 10,
              result_ttl_seconds: 3600,
              callback_url: null,
              callback: null,
              created_at: T,
              updated_at: T,
              reserved_nusd: 0,
            } as never)
            .execute();
          await database.write
            .insertInto('cargo_requests')
            .values({ cargo_id: id, request: '{}', metadata: `{"batch_id":"${batchId}","custom_id":"r${i}"}` })
            .execute();
          await database.write
            .insertInto('compat_batch_requests')
            .values({ batch_id: batchId, position: i, custom_id: `r${i}`, cargo_id: id })
            .execute();
        }
        const result = (cargoId: string, success: number, errorMessage: string | null, at: number) =>
          database.write
            .insertInto('results')
            .values({
              cargo_id: cargoId,
              success,
              response: success ? '{}' : null,
              error_message: errorMessage,
              created_at: at,
              expires_at: at + 3_600_000,
              purged_at: null,
              project_id: projectId,
              cost_usd: null,
              standard_cost_usd: null,
            } as never)
            .execute();
        await result(cargoIds[0] as string, 1, null, T + 1000);
        await result(cargoIds[1] as string, 0, 'canceled', T + 2000);

        await migrate(database);
        const counts = async () => {
          const row = await database.read
            .selectFrom('compat_batches')
            .select(['succeeded', 'errored', 'canceled', 'expired', 'last_result_at'])
            .where('id', '=', batchId)
            .executeTakeFirstOrThrow();
          return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
        };
        assert.deepEqual(await counts(), {
          succeeded: 1,
          errored: 0,
          canceled: 1,
          expired: 0,
          last_result_at: T + 2000,
        });
        const moved = await database.read
          .selectFrom('compat_cargo as m')
          .innerJoin('cargo_requests as q', 'q.cargo_id', 'm.cargo_id')
          .select(['m.metadata', 'q.metadata as left'])
          .orderBy('m.cargo_id')
          .execute();
        assert.deepEqual(
          moved.map((r) => [JSON.parse(r.metadata).custom_id, r.left]),
          [
            ['r0', null],
            ['r1', null],
            ['r2', null],
          ],
        );

        await result(cargoIds[2] as string, 0, 'invalid_request_error: no', T + 3000);
        assert.deepEqual(await counts(), {
          succeeded: 1,
          errored: 1,
          canceled: 1,
          expired: 0,
          last_result_at: T + 3000,
        });
      } finally {
        await db.drop();
      }
    });
  });
}
