/** Storing results: the result rows, their usage, their deliveries and the cargo's move, under the batch's lease. */
import { type Generated, type Insertable, sql, type Transaction } from 'kysely';
import { DAY_MS } from '../../domain/clock.js';
import { type CargoStatus, movableFrom } from '../../domain/lifecycle.js';
import type { Usage } from '../../domain/usage.js';
import { chunks, RowsInsert, statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import { type DeliveryRequest, insertDeliveries } from '../deliveries/create.js';
import { assertBatchLease, type BatchLease } from '../leases.js';
import type { ResultsTable, Schema, UsageDaysTable } from '../schema.js';
import type { AwaitingCargo } from './awaiting.js';

export interface NewResult {
  /**
   * The cargo it answers, as the collector read it: its project, model and requests go on the
   * result and its usage; a `records` cargo's staged per-record results are dropped with it; the
   * deliveries it asked for start with it.
   */
  cargo: AwaitingCargo;
  success: boolean;
  /** JSON text of the response, or null. */
  response: string | null;
  errorMessage: string | null;
  /** The status the cargo moves to with this result. */
  nextStatus: CargoStatus;
  /** What the result used and cost; left out, it used nothing (0 tokens, no cost recorded). */
  usage?: Usage;
}

/**
 * Stores results, adds them to their projects' usage, creates their deliveries and moves their
 * cargo on, in one transaction, under the batch's lease (a collector that lost it writes nothing:
 * LeaseLostError). Only cargo that actually move from batched/processing get a result, usage and
 * deliveries, so a result stored twice (a re-run after a crash, two collectors) is never counted
 * or delivered twice. Resolves to how many cargo moved to each status.
 */
export async function storeResults(
  database: Database,
  lease: BatchLease,
  results: NewResult[],
  now: number,
): Promise<Map<CargoStatus, number>> {
  const movedTo = new Map<CargoStatus, number>();
  if (results.length === 0) return movedTo;
  await database.write.transaction().execute(async (tx) => {
    await assertBatchLease(tx, database.dialect, lease);
    // The cargo that move (each taken out as its result is stored).
    const moved = new Set<string>();
    const byStatus = new Map<CargoStatus, string[]>();
    for (const r of results) {
      const ids = byStatus.get(r.nextStatus);
      if (ids) ids.push(r.cargo.id);
      else byStatus.set(r.nextStatus, [r.cargo.id]);
    }
    for (const [status, ids] of byStatus) {
      for (const part of chunks(ids)) {
        const rows = await tx
          .updateTable('cargo')
          .set({ status, updated_at: now })
          .where('id', 'in', part)
          .where('status', 'in', movableFrom('result'))
          .returning('id')
          .execute();
        for (const row of rows) moved.add(row.id);
        if (rows.length > 0) movedTo.set(status, (movedTo.get(status) ?? 0) + rows.length);
      }
    }
    // Once each: a result a provider answered twice is stored, counted and delivered once.
    const stored = results.filter(({ cargo }) => moved.delete(cargo.id));
    for (const part of statementChunks(
      stored,
      RESULT_COLUMNS.length,
      (r) => (r.response?.length ?? 0) + (r.errorMessage?.length ?? 0),
    )) {
      await tx.executeQuery(
        RESULTS_INSERT.compile(
          database.dialect,
          part.map((r) => resultRow(r, now)),
        ),
      );
    }
    await insertDeliveries(tx, deliveriesFor(stored), now);
    const records = stored.filter((r) => r.cargo.isRecords).map((r) => r.cargo.id);
    for (const part of chunks(records)) {
      await tx.deleteFrom('record_results').where('cargo_id', 'in', part).execute();
    }
    // Last: on PostgreSQL, collectors of one project wait on its usage rows only for their commit.
    await addUsage(tx, usageRows(stored, now));
  });
  return movedTo;
}

const RESULT_COLUMNS = [
  'cargo_id',
  'success',
  'response',
  'error_message',
  'created_at',
  'expires_at',
  'purged_at',
  'project_id',
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_creation_1h_input_tokens',
  'cache_read_input_tokens',
  'cost_usd',
  'standard_cost_usd',
] as const satisfies readonly (keyof ResultsTable)[];
// Every column of the table is written (a new one must be added above).
const _everyColumn: Exclude<keyof ResultsTable, (typeof RESULT_COLUMNS)[number]> extends never ? true : never = true;

/** The results insert: a result stored again (a re-run after a crash) is left as it is. */
const RESULTS_INSERT = new RowsInsert('results', RESULT_COLUMNS, 'on conflict ("cargo_id") do nothing');

/** A result's row: every column of the table. */
function resultRow(
  r: NewResult,
  now: number,
): { [C in keyof ResultsTable]: ResultsTable[C] extends Generated<infer T> ? T : ResultsTable[C] } {
  return {
    cargo_id: r.cargo.id,
    success: r.success ? 1 : 0,
    response: r.response,
    error_message: r.errorMessage,
    created_at: now,
    expires_at: now + r.cargo.resultTtlSeconds * 1000,
    purged_at: null,
    project_id: r.cargo.projectId,
    input_tokens: r.usage?.inputTokens ?? 0,
    output_tokens: r.usage?.outputTokens ?? 0,
    cache_creation_input_tokens: r.usage?.cacheCreationTokens ?? 0,
    cache_creation_1h_input_tokens: r.usage?.cacheCreation1hTokens ?? 0,
    cache_read_input_tokens: r.usage?.cacheReadTokens ?? 0,
    cost_usd: r.usage?.costUsd ?? null,
    standard_cost_usd: r.usage?.standardCostUsd ?? null,
  };
}

/** The results' usage, one row per project and model (all are stored on one day), in key order. */
function usageRows(stored: NewResult[], now: number): Insertable<UsageDaysTable>[] {
  const rows = new Map<string, Insertable<UsageDaysTable>>();
  const day = Math.floor(now / DAY_MS);
  const plus = (sum: number | null | undefined, value: number | null | undefined) =>
    value === null || value === undefined ? (sum ?? null) : (sum ?? 0) + value;
  for (const r of stored) {
    const { cargo } = r;
    const key = `${cargo.projectId}\n${cargo.model}`;
    const row = rows.get(key) ?? {
      project_id: cargo.projectId,
      day,
      model: cargo.model,
      cargo: 0,
      requests: 0,
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cost_usd: null,
      standard_cost_usd: null,
    };
    row.cargo += 1;
    row.requests += cargo.requestCount;
    row.input_tokens += r.usage?.inputTokens ?? 0;
    row.output_tokens += r.usage?.outputTokens ?? 0;
    row.cache_creation_input_tokens += r.usage?.cacheCreationTokens ?? 0;
    row.cache_read_input_tokens += r.usage?.cacheReadTokens ?? 0;
    row.cost_usd = plus(row.cost_usd, r.usage?.costUsd);
    row.standard_cost_usd = plus(row.standard_cost_usd, r.usage?.standardCostUsd);
    rows.set(key, row);
  }
  // One order for every transaction, so two of them never wait on each other's rows in a cycle.
  return [...rows.values()].sort((a, b) =>
    a.project_id !== b.project_id ? (a.project_id < b.project_id ? -1 : 1) : a.model < b.model ? -1 : 1,
  );
}

/** Adds to the usage rows (a cost stays null until one with a known price is added). */
async function addUsage(tx: Transaction<Schema>, rows: Insertable<UsageDaysTable>[]): Promise<void> {
  const cost = (column: 'cost_usd' | 'standard_cost_usd') =>
    sql<number | null>`case when excluded.${sql.ref(column)} is null then usage_days.${sql.ref(column)}
      else coalesce(usage_days.${sql.ref(column)}, 0) + excluded.${sql.ref(column)} end`;
  const sum = (column: keyof UsageDaysTable) =>
    sql<number>`usage_days.${sql.ref(column)} + excluded.${sql.ref(column)}`;
  for (const part of statementChunks(rows, 11)) {
    await tx
      .insertInto('usage_days')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['project_id', 'day', 'model']).doUpdateSet({
          cargo: sum('cargo'),
          requests: sum('requests'),
          input_tokens: sum('input_tokens'),
          output_tokens: sum('output_tokens'),
          cache_creation_input_tokens: sum('cache_creation_input_tokens'),
          cache_read_input_tokens: sum('cache_read_input_tokens'),
          cost_usd: cost('cost_usd'),
          standard_cost_usd: cost('standard_cost_usd'),
        }),
      )
      .execute();
  }
}

function deliveriesFor(results: NewResult[]): DeliveryRequest[] {
  return results.flatMap(({ cargo }) =>
    cargo.channels.map((channel) => ({ cargoId: cargo.id, channel, trigger: 'result' })),
  );
}
