import type { Transaction } from 'kysely';
import type { Dialect } from './database.js';
import type { Schema } from './schema.js';

/** A worker's claim on a batch: what every write made under it carries. */
export interface BatchLease {
  batchId: string;
  workerId: string;
}

/** A write under a batch lease found the lease gone: another worker has taken the batch over. */
export class LeaseLostError extends Error {
  constructor(batchId: string) {
    super(`lost the lease on batch ${batchId}`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Checks, inside a write transaction, that the worker still holds the batch's lease, and keeps it
 * held until the transaction ends: on PostgreSQL the batch row is locked (a claim by another
 * worker waits for this commit); on SQLite the transaction already holds the only write lock.
 * Throws LeaseLostError otherwise, which rolls the transaction back.
 */
export async function assertBatchLease(tx: Transaction<Schema>, dialect: Dialect, lease: BatchLease): Promise<void> {
  const held = await tx
    .selectFrom('batches')
    .select('id')
    .where('id', '=', lease.batchId)
    .where('locked_by', '=', lease.workerId)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate())
    .executeTakeFirst();
  if (!held) throw new LeaseLostError(lease.batchId);
}
