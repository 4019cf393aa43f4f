/** Canceling a cargo before any of it reaches a provider: its status, its batch's counts and its result, in one transaction. */
import { CARGO_CANCELED_ERROR, type CargoStatus, movableFrom } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';

export type CancelOutcome =
  | { kind: 'canceled' }
  | { kind: 'not_found' }
  /** Too late: processing or finished, or batched in a batch whose submission has begun. */
  | { kind: 'too_late'; status: CargoStatus };

/**
 * One try at canceling one of a project's cargo. A pending cargo simply becomes canceled. A batched one leaves
 * its batch, whose counts shrink with it, but only while the batch's submission has not begun
 * (`submit_started_at` is null): from then on the provider may have its requests, and the
 * submitter has fixed the job's size (a lost create is found again by it). The batch row is
 * updated before the cargo row, the order the submitter takes them in (markBatchSubmitted), so the
 * two never wait for each other on PostgreSQL; on SQLite the transaction is the only writer.
 *
 * The canceled cargo gets its result at once (success false, `canceled`), kept for its
 * result_ttl_seconds like any other, and no delivery; GET /usage leaves canceled cargo out.
 */
async function cancelInOneTransaction(
  database: Database,
  input: { projectId: string; cargoId: string; now: number },
): Promise<CancelOutcome> {
  return database.write.transaction().execute(async (tx) => {
    const cargo = await tx
      .selectFrom('cargo')
      .select(['id', 'status', 'batch_id', 'request_count', 'request_bytes', 'result_ttl_seconds'])
      .where('id', '=', input.cargoId)
      .where('project_id', '=', input.projectId)
      .executeTakeFirst();
    if (!cargo) return { kind: 'not_found' };
    if (cargo.status === 'batched' && cargo.batch_id !== null) {
      const shrunk = await tx
        .updateTable('batches')
        .set((eb) => ({
          cargo_count: eb('cargo_count', '-', 1),
          request_count: eb('request_count', '-', cargo.request_count),
          request_bytes: eb('request_bytes', '-', cargo.request_bytes),
          updated_at: input.now,
        }))
        .where('id', '=', cargo.batch_id)
        .where('status', '=', 'submitting')
        .where('submit_started_at', 'is', null)
        .executeTakeFirst();
      if (Number(shrunk.numUpdatedRows) === 0) return { kind: 'too_late', status: cargo.status };
    }
    // Guarded by the status read: a batcher that took the cargo meanwhile (PostgreSQL) makes this
    // change nothing, and the whole transaction is rolled back below.
    const moved = await tx
      .updateTable('cargo')
      .set({ status: 'canceled', batch_id: null, updated_at: input.now })
      .where('id', '=', cargo.id)
      .where('status', '=', cargo.status)
      .where('status', 'in', movableFrom('cancel'))
      .$if(cargo.batch_id === null, (qb) => qb.where('batch_id', 'is', null))
      .$if(cargo.batch_id !== null, (qb) => qb.where('batch_id', '=', cargo.batch_id as string))
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) {
      if (movableFrom('cancel').includes(cargo.status)) throw new CancelRaced();
      return { kind: 'too_late', status: cargo.status };
    }
    await tx
      .insertInto('results')
      .values({
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
      })
      .execute();
    return { kind: 'canceled' };
  });
}

/** The cargo moved between the read and the change: the transaction is undone and tried again. */
class CancelRaced extends Error {}

/**
 * Cancels one of a project's cargo, trying again when it raced a batcher (PostgreSQL's read
 * committed lets a batcher move the cargo between the read and the change); each try is one
 * transaction, and a cargo moves forward only, so a few tries always settle it.
 */
export async function cancelCargo(
  database: Database,
  input: { projectId: string; cargoId: string; now: number },
): Promise<CancelOutcome> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await cancelInOneTransaction(database, input);
    } catch (err) {
      if (!(err instanceof CancelRaced) || attempt >= 4) throw err;
    }
  }
}
