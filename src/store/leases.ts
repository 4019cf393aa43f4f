import { type Kysely, sql, type Transaction } from 'kysely';
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

/** The tables whose rows are worked on under leases, with the column that says when each is due. */
const DUE_COLUMNS = { batches: 'next_check_at', deliveries: 'next_attempt_at', outbox: 'next_attempt_at' } as const;

/**
 * The earliest time a row of `table` still to be worked on needs attention: its due time, or the
 * end of a lease held on it (a worker that dies lets it lapse then). What a worker loop sleeps
 * until. `unfinished` says which rows count (by status).
 */
export async function nextDueAt(
  db: Kysely<Schema>,
  table: keyof typeof DUE_COLUMNS,
  unfinished: { status: string } | { statusNot: string },
): Promise<number | null> {
  const due = sql.ref(DUE_COLUMNS[table]);
  // Literals, not parameters: SQLite uses a partial index (`where status = 'pending'`) only for
  // a query whose condition it can see.
  const filter =
    'status' in unfinished
      ? sql`status = ${sql.lit(unfinished.status)}`
      : sql`status <> ${sql.lit(unfinished.statusNot)}`;
  const { rows } = await sql<{ at: number | string | null }>`
    select min(case when locked_until is not null and locked_until > ${due} then locked_until else ${due} end) as at
    from ${sql.table(table)} where ${filter}`.execute(db);
  const at = rows[0]?.at;
  return at == null ? null : Number(at);
}
