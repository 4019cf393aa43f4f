import type { ExpressionBuilder, Kysely } from 'kysely';
import { type CargoStatus, movableFrom } from '../domain/lifecycle.js';
import { chunks } from './chunks.js';
import type { Database } from './database.js';
import { type DeliveryRequest, insertDeliveries, requestedChannels } from './deliveries.js';
import { assertBatchLease, type BatchLease } from './leases.js';
import type { DeliveryChannelName, Schema } from './schema.js';

export interface AwaitingCargo {
  id: string;
  isRecords: boolean;
  requestCount: number;
  resultTtlSeconds: number;
  /** The deliveries the cargo asked for. */
  channels: DeliveryChannelName[];
}

/** The cargo of a batch that have no result yet (a re-run of a collection skips the rest). */
export async function cargoAwaitingResults(db: Kysely<Schema>, batchId: string): Promise<AwaitingCargo[]> {
  const rows = await db
    .selectFrom('cargo')
    .select(['id', 'is_records', 'request_count', 'result_ttl_seconds', 'callback_url', 'callback'])
    .where('batch_id', '=', batchId)
    .where('status', 'in', movableFrom('result'))
    .execute();
  return rows.map((r) => ({
    id: r.id,
    isRecords: r.is_records === 1,
    requestCount: r.request_count,
    resultTtlSeconds: r.result_ttl_seconds,
    channels: requestedChannels(r.callback_url, r.callback),
  }));
}

export interface NewResult {
  cargoId: string;
  success: boolean;
  /** JSON text of the response, or null. */
  response: string | null;
  errorMessage: string | null;
  resultTtlSeconds: number;
  /** A `records` cargo: its staged per-record results are dropped with this result. */
  isRecords: boolean;
  /** The status the cargo moves to with this result. */
  nextStatus: CargoStatus;
  /** Deliveries to start with this result. */
  channels: DeliveryChannelName[];
}

// Seven columns a row: 500 rows stay far below SQLite's parameter bound.
const RESULT_CHUNK = 500;

/**
 * Stores results, creates their deliveries and moves their cargo on, in one transaction, under
 * the batch's lease (a collector that lost it writes nothing: LeaseLostError). Only cargo that
 * actually move from batched/processing get a result and deliveries, so a result stored twice (a
 * re-run after a crash, two collectors) never creates a second delivery.
 */
export async function storeResults(
  database: Database,
  lease: BatchLease,
  results: NewResult[],
  now: number,
): Promise<void> {
  if (results.length === 0) return;
  await database.write.transaction().execute(async (tx) => {
    await assertBatchLease(tx, database.dialect, lease);
    const moved = new Set<string>();
    const byStatus = new Map<CargoStatus, string[]>();
    for (const r of results) {
      const ids = byStatus.get(r.nextStatus);
      if (ids) ids.push(r.cargoId);
      else byStatus.set(r.nextStatus, [r.cargoId]);
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
      }
    }
    const stored = results.filter((r) => moved.has(r.cargoId));
    for (const part of chunks(stored, RESULT_CHUNK)) {
      await tx
        .insertInto('results')
        .values(
          part.map((r) => ({
            cargo_id: r.cargoId,
            success: r.success ? 1 : 0,
            response: r.response,
            error_message: r.errorMessage,
            created_at: now,
            expires_at: now + r.resultTtlSeconds * 1000,
            purged_at: null,
          })),
        )
        .onConflict((oc) => oc.column('cargo_id').doNothing())
        .execute();
    }
    await insertDeliveries(tx, deliveriesFor(stored), now);
    const records = stored.filter((r) => r.isRecords).map((r) => r.cargoId);
    for (const part of chunks(records)) {
      await tx.deleteFrom('record_results').where('cargo_id', 'in', part).execute();
    }
  });
}

function deliveriesFor(results: NewResult[]): DeliveryRequest[] {
  return results.flatMap((r) => r.channels.map((channel) => ({ cargoId: r.cargoId, channel, trigger: 'result' })));
}

export interface StagedRecord {
  cargoId: string;
  recordIndex: number;
  success: boolean;
  /** JSON of `{recordId, success, response, error}`. */
  body: string;
}

/** Keeps records' results until every record of their cargo has one, under the batch's lease. */
export async function stageRecordResults(
  database: Database,
  lease: BatchLease,
  records: StagedRecord[],
): Promise<void> {
  if (records.length === 0) return;
  await database.write.transaction().execute(async (tx) => {
    await assertBatchLease(tx, database.dialect, lease);
    for (const part of chunks(records, RESULT_CHUNK)) {
      await tx
        .insertInto('record_results')
        .values(
          part.map((r) => ({
            cargo_id: r.cargoId,
            record_index: r.recordIndex,
            success: r.success ? 1 : 0,
            body: r.body,
          })),
        )
        .onConflict((oc) => oc.columns(['cargo_id', 'record_index']).doNothing())
        .execute();
    }
  });
}

export async function stagedRecordResults(db: Kysely<Schema>, cargoId: string): Promise<StagedRecord[]> {
  const rows = await db
    .selectFrom('record_results')
    .selectAll()
    .where('cargo_id', '=', cargoId)
    .orderBy('record_index')
    .execute();
  return rows.map((r) => ({
    cargoId: r.cargo_id,
    recordIndex: r.record_index,
    success: r.success === 1,
    body: r.body,
  }));
}

export async function cargoRequest(db: Kysely<Schema>, cargoId: string): Promise<string> {
  const row = await db.selectFrom('cargo').select('request').where('id', '=', cargoId).executeTakeFirstOrThrow();
  return row.request;
}

/**
 * Retention waits for deliveries in progress: a one-hour result whose webhook is still on its
 * 1 h 42 min retry schedule keeps its body until the last attempt.
 */
const noPendingDelivery = (eb: ExpressionBuilder<Schema, 'results'>) =>
  eb.not(
    eb.exists(
      eb
        .selectFrom('deliveries')
        .select('deliveries.id')
        .whereRef('deliveries.cargo_id', '=', 'results.cargo_id')
        .where('deliveries.status', '=', 'pending'),
    ),
  );

/**
 * Removes the bodies of results past their retention, a bounded chunk at a time (no table-wide
 * lock). The cargo row and its status stay, so the mailbox can answer 410 with the last status;
 * the request (the prompt) goes with the result.
 */
export async function purgeExpiredResults(db: Kysely<Schema>, now: number, limit: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('results')
      .select('cargo_id')
      .where('purged_at', 'is', null)
      .where('expires_at', '<=', now)
      .where(noPendingDelivery)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    if (due.length === 0) return 0;
    const ids = due.map((d) => d.cargo_id);
    for (const part of chunks(ids)) {
      await tx
        .updateTable('results')
        .set({ response: null, error_message: null, purged_at: now })
        .where('cargo_id', 'in', part)
        .execute();
      await tx.updateTable('cargo').set({ request: '{"requests":[]}' }).where('id', 'in', part).execute();
    }
    return ids.length;
  });
}

export async function nextResultExpiry(db: Kysely<Schema>): Promise<number | null> {
  const row = await db
    .selectFrom('results')
    .select((eb) => eb.fn.min('expires_at').as('at'))
    .where('purged_at', 'is', null)
    .where(noPendingDelivery)
    .executeTakeFirst();
  return row?.at == null ? null : Number(row.at);
}
