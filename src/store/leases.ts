/**
 * The lease machinery, once for every table worked on under leases (batches, deliveries, the
 * outbox, bulk recoveries): claim due rows, extend and release a lease, check it inside a write, and tell when the
 * next row is due. A lease is `locked_by` + `locked_until`; it lapses by itself when a worker dies.
 */
import { type Selectable, sql, type Transaction } from 'kysely';
import type { Database, Dialect } from './database.js';
import type { Schema } from './schema.js';

/** The tables whose rows are worked on under leases, with the column that says when each is due. */
const DUE_COLUMNS = {
  batches: 'next_check_at',
  deliveries: 'next_attempt_at',
  outbox: 'next_attempt_at',
  recoveries: 'next_run_at',
} as const;
export type LeasedTable = keyof typeof DUE_COLUMNS;

export interface ClaimInput {
  /** The status of the rows to claim (a literal of the lifecycle: never tenant input). */
  status: string;
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Rows of these providers are left alone (batches only: a provider whose slots are taken). */
  providersNot?: string[];
}

/**
 * Leases up to `limit` rows of `table` in `status` whose due time has come and that hold no live
 * lease, oldest due first, in one transaction (SKIP LOCKED on PostgreSQL, so workers claim
 * disjoint rows; SQLite's transaction holds the only write lock). Resolves to the leased rows.
 */
export async function claimDue<T extends LeasedTable>(
  database: Database,
  table: T,
  input: ClaimInput,
): Promise<Selectable<Schema[T]>[]> {
  const due = sql.ref(DUE_COLUMNS[table]);
  const lockRows = database.dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const skip = input.providersNot?.length ? sql`and provider not in (${sql.join(input.providersNot)})` : sql``;
  return database.write.transaction().execute(async (tx) => {
    // The status is a literal, not a parameter: SQLite uses a partial due-time index only for a
    // query whose condition it can see.
    const { rows } = await sql<{ id: string }>`
      select id from ${sql.table(table)}
      where status = ${sql.lit(input.status)} and ${due} <= ${input.now}
        and (locked_until is null or locked_until < ${input.now}) ${skip}
      order by ${due} limit ${input.limit} ${lockRows}`.execute(tx);
    if (rows.length === 0) return [];
    const leased = await sql<Selectable<Schema[T]>>`
      update ${sql.table(table)} set locked_by = ${input.workerId}, locked_until = ${input.now + input.leaseMs}
      where id in (${sql.join(rows.map((r) => r.id))}) returning *`.execute(tx);
    return leased.rows;
  });
}

/** Extends a lease the worker still holds; false if it was lost. */
export async function extendLease(
  database: Database,
  table: LeasedTable,
  lease: { id: string; workerId: string; until: number },
): Promise<boolean> {
  const result = await sql`
    update ${sql.table(table)} set locked_until = ${lease.until}
    where id = ${lease.id} and locked_by = ${lease.workerId}`.execute(database.write);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Gives up every lease a worker holds in `table` (graceful shutdown): others may take the rows at once. */
export async function releaseLeases(database: Database, table: LeasedTable, workerId: string): Promise<void> {
  await sql`update ${sql.table(table)} set locked_by = null, locked_until = null where locked_by = ${workerId}`.execute(
    database.write,
  );
}

/**
 * The earliest time a row of `table` still to be worked on needs attention: its due time, or the
 * end of a lease held on it (a worker that dies lets it lapse then). What a worker loop sleeps
 * until. `unfinished` says which rows count (by status).
 */
export async function nextDueAt(
  database: Database,
  table: LeasedTable,
  unfinished: { status: string } | { statusNot: string },
): Promise<number | null> {
  const due = sql.ref(DUE_COLUMNS[table]);
  // Literals, as in claimDue: the partial due-time indexes.
  const filter =
    'status' in unfinished
      ? sql`status = ${sql.lit(unfinished.status)}`
      : sql`status <> ${sql.lit(unfinished.statusNot)}`;
  const { rows } = await sql<{ at: number | string | null }>`
    select min(case when locked_until is not null and locked_until > ${due} then locked_until else ${due} end) as at
    from ${sql.table(table)} where ${filter}`.execute(database.read);
  const at = rows[0]?.at;
  return at == null ? null : Number(at);
}

/** A worker's claim on a batch: what every write made under it carries. */
export interface BatchLease {
  batchId: string;
  workerId: string;
}

/**
 * An update of a batch the worker holds the lease on, for the caller to `set`: a worker that lost
 * the lease changes nothing.
 */
export function leasedBatchUpdate(database: Database, lease: BatchLease) {
  return database.write.updateTable('batches').where('id', '=', lease.batchId).where('locked_by', '=', lease.workerId);
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
