/**
 * Migration 016 on every backend: a database with usage recorded before cache tokens (schema
 * through 015) keeps every result's tokens and costs and every staged record's tokens, counts 0
 * cache tokens for them, and reports the same usage afterwards; new results then store their cache
 * tokens beside the old ones.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { ManualClock } from '../../src/domain/clock.js';
import { newId } from '../../src/domain/ids.js';
import { usageReport } from '../../src/operations/usage.js';
import { migrate } from '../../src/store/migrate.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

const BEFORE = '015_cargo_pending_by_project';
const T0 = Date.UTC(2026, 10, 26, 12);
const DAY = '2026-11-26';

for (const backend of await backends()) {
  describe(`migration 016 with usage recorded on ${backend.name}`, () => {
    test('results and staged records keep their tokens and costs, gain 0 cache tokens, and report the same usage', async () => {
      const db = await backend.create({ migrateThrough: BEFORE });
      try {
        const old = db.database.write as unknown as Kysely<any>;
        const { projectId } = await createProjectWithKey(db.database, { now: T0 });
        const cargo = (id: string, model: string, requests: number) => ({
          id,
          project_id: projectId,
          status: 'completed',
          model,
          provider: 'anthropic',
          provider_model: `${model}-x`,
          request_count: requests,
          is_records: requests > 1 ? 1 : 0,
          request_bytes: 10,
          result_ttl_seconds: 3600,
          created_at: T0,
          updated_at: T0,
        });
        const ids = [newId('crg', T0), newId('crg', T0 + 1), newId('crg', T0 + 2)] as [string, string, string];
        await old
          .insertInto('cargo')
          .values([
            cargo(ids[0], 'claude-sonnet-4-5', 1),
            cargo(ids[1], 'claude-sonnet-4-5', 3),
            cargo(ids[2], 'gpt-4o', 1),
          ])
          .execute();
        const result = (
          cargoId: string,
          input: number,
          output: number,
          cost: number | null,
          standard: number | null,
        ) => ({
          cargo_id: cargoId,
          success: 1,
          response: '{"type":"message"}',
          created_at: T0,
          expires_at: T0 + 3_600_000,
          project_id: projectId,
          input_tokens: input,
          output_tokens: output,
          cost_usd: cost,
          standard_cost_usd: standard,
        });
        await old
          .insertInto('results')
          .values([
            result(ids[0], 1000, 200, 0.003, 0.006),
            result(ids[1], 3_000_000_000, 40, 4500.0003, 9000.0006),
            result(ids[2], 7, 3, null, null),
          ])
          .execute();
        // A records cargo still being assembled: its staged record keeps its tokens.
        await old
          .insertInto('record_results')
          .values({ cargo_id: ids[1], record_index: 0, success: 1, body: '{}', input_tokens: 11, output_tokens: 5 })
          .execute();
        const clock = new ManualClock(T0);

        const report = await migrate(db.database);
        assert.deepEqual(report.applied.slice(0, 1), ['016_cache_tokens']);

        const rows = await db.database.read.selectFrom('results').selectAll().orderBy('cargo_id').execute();
        assert.deepEqual(
          rows.map((r) => [
            r.cargo_id,
            Number(r.input_tokens),
            Number(r.output_tokens),
            r.cost_usd,
            r.standard_cost_usd,
            Number(r.cache_creation_input_tokens),
            Number(r.cache_creation_1h_input_tokens),
            Number(r.cache_read_input_tokens),
            r.response,
          ]),
          [
            [ids[0], 1000, 200, 0.003, 0.006, 0, 0, 0, '{"type":"message"}'],
            [ids[1], 3_000_000_000, 40, 4500.0003, 9000.0006, 0, 0, 0, '{"type":"message"}'],
            [ids[2], 7, 3, null, null, 0, 0, 0, '{"type":"message"}'],
          ],
        );
        const record = await db.database.read.selectFrom('record_results').selectAll().executeTakeFirstOrThrow();
        assert.deepEqual(
          [
            record.input_tokens,
            record.output_tokens,
            record.cache_creation_input_tokens,
            record.cache_creation_1h_input_tokens,
            record.cache_read_input_tokens,
          ],
          [11, 5, 0, 0, 0],
        );

        // The usage recorded before, with 0 cache tokens beside it.
        const after = await usageReport({ database: db.database, clock }, { projectId, from: DAY, to: DAY });
        assert.ok(after.ok);
        const zeros = { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
        assert.deepEqual(after.value.data, [
          {
            date: DAY,
            model: 'claude-sonnet-4-5',
            cargo: 2,
            requests: 4,
            input_tokens: 3_000_001_000,
            output_tokens: 240,
            ...zeros,
            cost_usd: 4500.0033,
            standard_cost_usd: 9000.0066,
          },
          {
            date: DAY,
            model: 'gpt-4o',
            cargo: 1,
            requests: 1,
            input_tokens: 7,
            output_tokens: 3,
            ...zeros,
            cost_usd: null,
            standard_cost_usd: null,
          },
        ]);
        assert.deepEqual(after.value.totals, {
          cargo: 3,
          requests: 5,
          input_tokens: 3_000_001_007,
          output_tokens: 243,
          ...zeros,
          cost_usd: 4500.0033,
          standard_cost_usd: 9000.0066,
          savings_usd: 4500.0033,
        });

        // Cache tokens past 32 bits are reported whole: the per-day usage rows (migration 026),
        // which new results add to, hold them next to the old usage.
        await db.database.write
          .updateTable('usage_days')
          .set({ cache_creation_input_tokens: 4_000_000_000, cache_read_input_tokens: 9 })
          .where('project_id', '=', projectId)
          .where('model', '=', 'gpt-4o')
          .execute();
        const later = await usageReport({ database: db.database, clock }, { projectId, from: DAY, to: DAY });
        assert.ok(later.ok);
        assert.deepEqual(
          [later.value.totals.cache_creation_input_tokens, later.value.totals.cache_read_input_tokens],
          [4_000_000_000, 9],
        );
      } finally {
        await db.drop();
      }
    });
  });
}
