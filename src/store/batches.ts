import type { Kysely, Selectable } from 'kysely';
import { movableFrom } from '../domain/lifecycle.js';
import { chunks } from './chunks.js';
import type { Database } from './database.js';
import { nextDueAt } from './leases.js';
import type { BatchesTable, BatchStatus, Schema } from './schema.js';

export interface PendingGroup {
  provider: string;
  providerModel: string;
  oldestAt: number;
}

/**
 * Every (provider, model) that has pending cargo, with its oldest cargo's time. Read group after
 * group from the cargo_pending index, one seek each (a loose index scan): GROUP BY would read every
 * pending row, 150 ms with a million pending, and the batcher asks before every batch it forms.
 */
export async function pendingGroups(db: Kysely<Schema>): Promise<PendingGroup[]> {
  const groups: PendingGroup[] = [];
  for (let group = await oldestPending(db, null); group; ) {
    groups.push(group);
    group =
      (await oldestPending(db, { provider: group.provider, modelAfter: group.providerModel })) ??
      (await oldestPending(db, { providerAfter: group.provider }));
  }
  return groups;
}

/** The oldest pending cargo's group, first in (provider, model) order after the given point. */
async function oldestPending(
  db: Kysely<Schema>,
  after: { provider: string; modelAfter: string } | { providerAfter: string } | null,
): Promise<PendingGroup | null> {
  let query = db
    .selectFrom('cargo')
    .select(['provider', 'provider_model', 'created_at'])
    .where('status', '=', 'pending');
  // Two separate seeks: with a row-value comparison or an OR instead, SQLite scans the index.
  if (after && 'modelAfter' in after) {
    query = query.where('provider', '=', after.provider).where('provider_model', '>', after.modelAfter);
  } else if (after) {
    query = query.where('provider', '>', after.providerAfter);
  }
  const row = await query
    .orderBy('provider')
    .orderBy('provider_model')
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
  return row ? { provider: row.provider, providerModel: row.provider_model, oldestAt: Number(row.created_at) } : null;
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
 * workers form disjoint batches at once; SQLite has a single writer, and its transaction holds the
 * write lock from the start (BEGIN IMMEDIATE), so the rows read are the rows moved.
 */
export async function formBatch(database: Database, input: FormBatchInput): Promise<FormedBatch | null> {
  return database.write.transaction().execute(async (tx) => {
    const chosen = chooseCargo(await selectCandidates(tx, database.dialect, input), input);
    if (!chosen) return null;
    await tx
      .insertInto('batches')
      .values({
        id: input.batchId,
        provider: input.provider,
        provider_model: input.providerModel,
        status: 'submitting',
        job_id: null,
        cargo_count: chosen.ids.length,
        request_count: chosen.requests,
        padding_count: 0,
        request_bytes: chosen.bytes,
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
    for (const part of chunks(chosen.ids)) {
      await tx
        .updateTable('cargo')
        .set({ status: 'batched', batch_id: input.batchId, updated_at: input.now })
        .where('id', 'in', part)
        .where('status', 'in', movableFrom('batch'))
        .execute();
    }
    return { batchId: input.batchId, cargoCount: chosen.ids.length, requestCount: chosen.requests };
  });
}

interface Candidate {
  id: string;
  request_count: number;
  request_bytes: number;
}

/** The group's oldest pending cargo, up to maxRequests of them (locked, on PostgreSQL). */
function selectCandidates(
  db: Kysely<Schema>,
  dialect: Database['dialect'],
  input: FormBatchInput,
): Promise<Candidate[]> {
  return db
    .selectFrom('cargo')
    .select(['id', 'request_count', 'request_bytes'])
    .where('status', '=', 'pending')
    .where('provider', '=', input.provider)
    .where('provider_model', '=', input.providerModel)
    .orderBy('created_at')
    .orderBy('id')
    .limit(input.maxRequests)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
    .execute();
}

/** The candidates that fit one batch; null if none do, or the batch must be full and is not. */
function chooseCargo(
  candidates: Candidate[],
  input: FormBatchInput,
): { ids: string[]; requests: number; bytes: number } | null {
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
  return { ids, requests, bytes };
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
  return database.write.transaction().execute(async (tx) => {
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
export function nextBatchCheckAt(db: Kysely<Schema>): Promise<number | null> {
  return nextDueAt(db, 'batches', { statusNot: 'ended' });
}

/** Extends a lease the worker still holds; false if it was lost. */
export async function extendLease(
  db: Kysely<Schema>,
  batchId: string,
  workerId: string,
  until: number,
): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ locked_until: until })
    .where('id', '=', batchId)
    .where('locked_by', '=', workerId)
    .executeTakeFirst();
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
  jobId: string;
  paddingCount: number;
  now: number;
  deadlineAt: number;
}

/**
 * The provider accepted the batch: record the job, move its cargo to `processing`, release. Not
 * guarded by the lease but by the batch having no job yet: a job the provider accepted must never
 * be dropped because the lease lapsed while the call was open. If another worker recorded a job
 * first, nothing changes and its job id comes back (the caller cancels its own duplicate).
 */
export async function markBatchSubmitted(
  database: Database,
  input: SubmittedBatch,
): Promise<{ recorded: true } | { recorded: false; jobId: string | null }> {
  return database.write.transaction().execute(async (tx) => {
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
      .where('status', '=', 'submitting')
      .where('job_id', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      const row = await tx.selectFrom('batches').select('job_id').where('id', '=', input.batchId).executeTakeFirst();
      return { recorded: false, jobId: row?.job_id ?? null };
    }
    await tx
      .updateTable('cargo')
      .set({ status: 'processing', updated_at: input.now })
      .where('batch_id', '=', input.batchId)
      .where('status', 'in', movableFrom('submit'))
      .execute();
    return { recorded: true };
  });
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
