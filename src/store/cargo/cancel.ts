/** Canceling cargo before any of it reaches a provider: their status, their batches' counts and their results, in one transaction. */
import { CARGO_CANCELED_ERROR, type CargoStatus, movableFrom } from '../../domain/lifecycle.js';
import { chunks } from '../chunks.js';
import type { Database } from '../database.js';

export type CancelOutcome =
  | { kind: 'canceled' }
  | { kind: 'not_found' }
  /** Too late: processing or finished, or batched in a batch whose submission has begun. */
  | { kind: 'too_late'; status: CargoStatus };

/** Cargo one transaction cancels at most (the ids are bound parameters of its statements). */
const CANCEL_CHUNK = 500;

/**
 * One try at canceling some of a project's cargo. A pending cargo simply becomes canceled. A
 * batched one leaves its batch, whose counts shrink with it, but only while the batch's submission
 * has not begun (`submit_started_at` is null): from then on the provider may have its requests,
 * and the submitter has fixed the job's size (a lost create is found again by it). Each batch row
 * is updated before its cargo rows, the order the submitter takes them in (markBatchSubmitted),
 * so the two never wait for each other on PostgreSQL; on SQLite the transaction is the only writer.
 *
 * A canceled cargo gets its result at once (success false, `canceled`), kept for its
 * result_ttl_seconds like any other, and no delivery; GET /usage leaves canceled cargo out.
 * Answers each found cargo's outcome: `canceled`, or the status that was too late to cancel.
 */
async function cancelInOneTransaction(
  database: Database,
  input: { projectId: string; cargoIds: readonly string[]; now: number },
): Promise<Map<string, CancelOutcome>> {
  return database.write.transaction().execute(async (tx) => {
    const found = await tx
      .selectFrom('cargo')
      .select(['id', 'status', 'batch_id', 'request_count', 'request_bytes', 'result_ttl_seconds'])
      .where('id', 'in', input.cargoIds)
      .where('project_id', '=', input.projectId)
      .execute();
    const outcomes = new Map<string, CancelOutcome>();
    const canceled: typeof found = [];
    const pending: typeof found = [];
    const byBatch = new Map<string, typeof found>();
    for (const cargo of found) {
      if (cargo.status === 'pending' && cargo.batch_id === null) pending.push(cargo);
      else if (cargo.status === 'batched' && cargo.batch_id !== null) {
        const members = byBatch.get(cargo.batch_id);
        if (members) members.push(cargo);
        else byBatch.set(cargo.batch_id, [cargo]);
      } else outcomes.set(cargo.id, { kind: 'too_late', status: cargo.status });
    }
    for (const batchId of [...byBatch.keys()].sort()) {
      const members = byBatch.get(batchId) ?? [];
      const shrunk = await tx
        .updateTable('batches')
        .set((eb) => ({
          cargo_count: eb('cargo_count', '-', members.length),
          request_count: eb('request_count', '-', sum(members, 'request_count')),
          request_bytes: eb('request_bytes', '-', sum(members, 'request_bytes')),
          updated_at: input.now,
        }))
        .where('id', '=', batchId)
        .where('status', '=', 'submitting')
        .where('submit_started_at', 'is', null)
        .executeTakeFirst();
      if (Number(shrunk.numUpdatedRows) === 0) {
        for (const cargo of members) outcomes.set(cargo.id, { kind: 'too_late', status: cargo.status });
        continue;
      }
      // Guarded by the status read: a cargo a worker moved meanwhile (PostgreSQL) changes nothing
      // here, and the whole transaction is rolled back below.
      const moved = await tx
        .updateTable('cargo')
        .set({ status: 'canceled', batch_id: null, updated_at: input.now })
        .where(
          'id',
          'in',
          members.map((c) => c.id),
        )
        .where('status', '=', 'batched')
        .where('batch_id', '=', batchId)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== members.length) throw new CancelRaced();
      canceled.push(...members);
    }
    if (pending.length > 0) {
      const moved = await tx
        .updateTable('cargo')
        .set({ status: 'canceled', updated_at: input.now })
        .where(
          'id',
          'in',
          pending.map((c) => c.id),
        )
        .where('status', 'in', movableFrom('cancel'))
        .where('status', '=', 'pending')
        .where('batch_id', 'is', null)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== pending.length) throw new CancelRaced();
      canceled.push(...pending);
    }
    if (canceled.length > 0) {
      await tx
        .insertInto('results')
        .values(
          canceled.map((cargo) => ({
            cargo_id: cargo.id,
            success: 0,
            response: null,
            error_message: CARGO_CANCELED_ERROR,
            created_at: input.now,
            expires_at: input.now + cargo.result_ttl_seconds * 1000,
            purged_at: null,
            project_id: input.projectId,
            cost_usd: null,
            standard_cost_usd: null,
          })),
        )
        .execute();
    }
    for (const cargo of canceled) outcomes.set(cargo.id, { kind: 'canceled' });
    return outcomes;
  });
}

const sum = (rows: { request_count: number; request_bytes: number }[], key: 'request_count' | 'request_bytes') =>
  rows.reduce((total, row) => total + Number(row[key]), 0);

/** A cargo moved between the read and the change: the transaction is undone and tried again. */
class CancelRaced extends Error {}

/**
 * Runs a cancel try again when it raced a worker (PostgreSQL's read committed lets a batcher move
 * a cargo between the read and the change); each try is one transaction, and a cargo moves
 * forward only, so a few tries always settle it.
 */
async function withRetries(
  database: Database,
  input: { projectId: string; cargoIds: readonly string[]; now: number },
): Promise<Map<string, CancelOutcome>> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await cancelInOneTransaction(database, input);
    } catch (err) {
      if (!(err instanceof CancelRaced) || attempt >= 4) throw err;
    }
  }
}

/** Cancels one of a project's cargo (POST /cargo/{id}/cancel). */
export async function cancelCargo(
  database: Database,
  input: { projectId: string; cargoId: string; now: number },
): Promise<CancelOutcome> {
  const outcomes = await withRetries(database, { ...input, cargoIds: [input.cargoId] });
  return outcomes.get(input.cargoId) ?? { kind: 'not_found' };
}

/**
 * Cancels every cargo of the list that can still be canceled, a chunk per transaction (a
 * provider-compatible batch of 100,000 requests); returns how many it canceled. The others are
 * left to finish as they are.
 */
export async function cancelManyCargo(
  database: Database,
  input: { projectId: string; cargoIds: readonly string[]; now: number },
): Promise<number> {
  let canceled = 0;
  for (const part of chunks([...input.cargoIds], CANCEL_CHUNK)) {
    const outcomes = await withRetries(database, { ...input, cargoIds: part });
    for (const outcome of outcomes.values()) if (outcome.kind === 'canceled') canceled++;
  }
  return canceled;
}
