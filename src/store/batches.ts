import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from './database.js';
import type { BatchesTable, BatchStatus, Schema } from './schema.js';
import { type Statement, writeWorkerOf } from './sqlite-write-worker.js';

// Id lists go into `in (...)` in chunks far below SQLite's 32,766 bound parameters.
export const ID_CHUNK = 1000;

export function chunks<T>(items: T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface PendingGroup {
  provider: string;
  providerModel: string;
  oldestAt: number;
}

/** Every (provider, model) that has pending cargo, with its oldest cargo's time. */
export async function pendingGroups(db: Kysely<Schema>): Promise<PendingGroup[]> {
  const rows = await db
    .selectFrom('cargo')
    .select(['provider', 'provider_model', (eb) => eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .groupBy(['provider', 'provider_model'])
    .execute();
  return rows.map((r) => ({ provider: r.provider, providerModel: r.provider_model, oldestAt: Number(r.oldest) }));
}

export interface FormBatchInput {
  batchId: string;
  provider: string;
  providerModel: string;
  maxRequests: number;
  maxBytes: number;
  /** Form the batch only if it reaches maxRequests or maxBytes (the group is not due by time). */
  onlyIfFull: boolean;
  now: number;
}

export interface FormedBatch {
  batchId: string;
  cargoCount: number;
  requestCount: number;
}

/**
 * Moves the oldest pending cargo of one group into a new batch, in one transaction: no cargo can
 * end up in two batches. On PostgreSQL the candidate rows are locked with SKIP LOCKED, so several
 * workers form disjoint batches at once; SQLite has a single writer.
 */
export async function formBatch(database: Database, input: FormBatchInput): Promise<FormedBatch | null> {
  return database.db.transaction().execute(async (tx) => {
    const candidates = await tx
      .selectFrom('cargo')
      .select(['id', 'request_count', 'request_bytes'])
      .where('status', '=', 'pending')
      .where('provider', '=', input.provider)
      .where('provider_model', '=', input.providerModel)
      .orderBy('created_at')
      .orderBy('id')
      .limit(input.maxRequests)
      .$if(database.dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
      .execute();

    const ids: string[] = [];
    let requests = 0;
    let bytes = 0;
    let full = false;
    for (const c of candidates) {
      if (requests + c.request_count > input.maxRequests || bytes + c.request_bytes > input.maxBytes) {
        full = true;
        break;
      }
      ids.push(c.id);
      requests += c.request_count;
      bytes += c.request_bytes;
    }
    full ||= requests >= input.maxRequests;
    if (ids.length === 0 || (input.onlyIfFull && !full)) return null;

    await tx
      .insertInto('batches')
      .values({
        id: input.batchId,
        provider: input.provider,
        provider_model: input.providerModel,
        status: 'submitting',
        job_id: null,
        cargo_count: ids.length,
        request_count: requests,
        padding_count: 0,
        request_bytes: bytes,
        created_at: input.now,
        submitted_at: null,
        deadline_at: null,
        next_check_at: input.now,
        canceled_at: null,
        ended_at: null,
        end_reason: null,
        locked_by: null,
        locked_until: null,
        last_error: null,
        updated_at: input.now,
      })
      .execute();
    for (const part of chunks(ids)) {
      await tx
        .updateTable('cargo')
        .set({ status: 'batched', batch_id: input.batchId, updated_at: input.now })
        .where('id', 'in', part)
        .where('status', '=', 'pending')
        .execute();
    }
    return { batchId: input.batchId, cargoCount: ids.length, requestCount: requests };
  });
}

export type BatchRow = Selectable<BatchesTable>;

/**
 * Leases due batches in one status: unended, `next_check_at` reached and no live lease. The lease
 * is the only thing that keeps two workers off one batch; it lapses by itself if a worker dies.
 */
export async function claimDueBatches(
  database: Database,
  input: { status: BatchStatus; workerId: string; now: number; leaseMs: number; limit: number },
): Promise<BatchRow[]> {
  return database.db.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('batches')
      .select('id')
      .where('status', '=', input.status)
      .where('next_check_at', '<=', input.now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', input.now)]))
      .orderBy('next_check_at')
      .limit(input.limit)
      .$if(database.dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
      .execute();
    if (due.length === 0) return [];
    return tx
      .updateTable('batches')
      .set({ locked_by: input.workerId, locked_until: input.now + input.leaseMs })
      .where(
        'id',
        'in',
        due.map((d) => d.id),
      )
      .returningAll()
      .execute();
  });
}

/** The earliest time any unended batch needs attention (a due check or a lapsing lease). */
export async function nextBatchCheckAt(db: Kysely<Schema>): Promise<number | null> {
  const row = await db
    .selectFrom('batches')
    .select(
      sql<
        number | null
      >`min(case when locked_until is not null and locked_until > next_check_at then locked_until else next_check_at end)`.as(
        'at',
      ),
    )
    .where('status', '<>', 'ended')
    .executeTakeFirst();
  return row?.at == null ? null : Number(row.at);
}

/**
 * Extends a lease the worker still holds; false if it was lost. An explicit transaction, because
 * on SQLite that waits its turn behind the write worker's commits (sqlite-write-worker.ts) instead
 * of blocking the event loop in SQLite's busy handler; collections call this after every flush.
 */
export async function extendLease(
  db: Kysely<Schema>,
  batchId: string,
  workerId: string,
  until: number,
): Promise<boolean> {
  const result = await db.transaction().execute((tx) =>
    tx
      .updateTable('batches')
      .set({ locked_until: until })
      .where('id', '=', batchId)
      .where('locked_by', '=', workerId)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows) > 0;
}

export interface BatchCargo {
  id: string;
  request: string;
  is_records: number;
}

/** The provider requests of a batch, in cargo order. */
export async function batchCargoRequests(db: Kysely<Schema>, batchId: string): Promise<BatchCargo[]> {
  return db
    .selectFrom('cargo')
    .select(['id', 'request', 'is_records'])
    .where('batch_id', '=', batchId)
    .orderBy('id')
    .execute();
}

export interface SubmittedBatch {
  batchId: string;
  workerId: string;
  jobId: string;
  paddingCount: number;
  now: number;
  deadlineAt: number;
}

/**
 * The provider accepted the batch: record the job, move its cargo to `processing`, release.
 * False if the worker no longer held the lease (then nothing changes).
 *
 * On a SQLite file the transaction runs on the write worker: it rewrites every cargo row of the
 * batch (up to BARGE_BATCH_MAX_SIZE of them), and the event loop has other batches to serve.
 */
export async function markBatchSubmitted(database: Database, input: SubmittedBatch): Promise<boolean> {
  const writer = writeWorkerOf(database.db);
  if (writer) {
    await writer.run(markSubmittedStatements(input));
    // The worker reports no row counts; the batch row shows whether this update applied.
    const row = await database.db
      .selectFrom('batches')
      .select(['status', 'job_id', 'submitted_at'])
      .where('id', '=', input.batchId)
      .executeTakeFirst();
    return row?.status === 'processing' && row.job_id === input.jobId && row.submitted_at === input.now;
  }
  return database.db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('batches')
      .set({
        status: 'processing',
        job_id: input.jobId,
        padding_count: input.paddingCount,
        submitted_at: input.now,
        deadline_at: input.deadlineAt,
        next_check_at: input.now,
        locked_by: null,
        locked_until: null,
        last_error: null,
        updated_at: input.now,
      })
      .where('id', '=', input.batchId)
      .where('locked_by', '=', input.workerId)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    await tx
      .updateTable('cargo')
      .set({ status: 'processing', updated_at: input.now })
      .where('batch_id', '=', input.batchId)
      .where('status', '=', 'batched')
      .execute();
    return true;
  });
}

// markBatchSubmitted for the write worker, which runs statements without looking at their
// results: the cargo move is conditioned on the lease itself, so it goes first, while the batch
// row still names the lease holder.
const CARGO_SUBMITTED_SQL =
  "update cargo set status = 'processing', updated_at = ? where batch_id = ? and status = 'batched' " +
  'and exists (select 1 from batches where id = ? and locked_by = ?)';
const BATCH_SUBMITTED_SQL =
  "update batches set status = 'processing', job_id = ?, padding_count = ?, submitted_at = ?, deadline_at = ?, " +
  'next_check_at = ?, locked_by = null, locked_until = null, last_error = null, updated_at = ? ' +
  'where id = ? and locked_by = ?';

function markSubmittedStatements(input: SubmittedBatch): Statement[] {
  return [
    { sql: CARGO_SUBMITTED_SQL, rows: [[input.now, input.batchId, input.batchId, input.workerId]] },
    {
      sql: BATCH_SUBMITTED_SQL,
      rows: [
        [
          input.jobId,
          input.paddingCount,
          input.now,
          input.deadlineAt,
          input.now,
          input.now,
          input.batchId,
          input.workerId,
        ],
      ],
    },
  ];
}

/** Releases the lease and schedules the next look, optionally recording a failed attempt. */
export async function rescheduleBatch(
  db: Kysely<Schema>,
  input: { batchId: string; workerId: string; nextCheckAt: number; now: number; error?: string; polled?: boolean },
): Promise<void> {
  await db
    .updateTable('batches')
    .set((eb) => ({
      next_check_at: input.nextCheckAt,
      locked_by: null,
      locked_until: null,
      updated_at: input.now,
      ...(input.error === undefined ? {} : { last_error: input.error, attempts: eb('attempts', '+', 1) }),
      ...(input.polled ? { poll_count: eb('poll_count', '+', 1) } : {}),
    }))
    .where('id', '=', input.batchId)
    .where('locked_by', '=', input.workerId)
    .execute();
}

export async function markBatchCanceled(
  db: Kysely<Schema>,
  input: { batchId: string; workerId: string; now: number },
): Promise<void> {
  await db
    .updateTable('batches')
    .set({ canceled_at: input.now, updated_at: input.now })
    .where('id', '=', input.batchId)
    .where('locked_by', '=', input.workerId)
    .execute();
}

export async function markBatchEnded(
  db: Kysely<Schema>,
  input: { batchId: string; workerId: string; reason: string; now: number },
): Promise<void> {
  await db
    .updateTable('batches')
    .set({
      status: 'ended',
      end_reason: input.reason,
      ended_at: input.now,
      locked_by: null,
      locked_until: null,
      updated_at: input.now,
    })
    .where('id', '=', input.batchId)
    .where('locked_by', '=', input.workerId)
    .execute();
}

/** Gives up every lease a worker holds (graceful shutdown): others may take the batches at once. */
export async function releaseLeases(db: Kysely<Schema>, workerId: string): Promise<void> {
  await db
    .updateTable('batches')
    .set({ locked_by: null, locked_until: null })
    .where('locked_by', '=', workerId)
    .execute();
}
