/**
 * Provider-compatible batches (migration 023): made invisibly in staged chunks, then made whole in
 * one transaction that creates their cargo; read, counted, ended, canceled and deleted.
 */
import { type Insertable, type Selectable, sql } from 'kysely';
import type { CargoStatus } from '../../domain/lifecycle.js';
import { statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import { newCargoNotice } from '../notify.js';
import type { CompatBatchesTable, CompatBatchRequestsTable, CompatStagedCargoTable } from '../schema.js';
import { reservedCargoStatements } from '../spend-usage.js';
import { acceptedCargoStatements } from '../storage-usage.js';

export type CompatApi = CompatBatchesTable['api'];
export type CompatBatchRow = Selectable<CompatBatchesTable>;

/** The batch is no longer this creator's (its lease lapsed and the sweeper took it). */
export class CompatLeaseLost extends Error {
  constructor(batchId: string) {
    super(`the lease on batch ${batchId} was lost`);
    this.name = 'CompatLeaseLost';
  }
}

/** A new batch, invisible (`creating`) under its creator's lease. */
export async function beginCompatBatch(
  database: Database,
  row: Pick<
    Insertable<CompatBatchesTable>,
    'id' | 'project_id' | 'api' | 'created_at' | 'locked_by' | 'locked_until' | 'input_file_id' | 'metadata'
  >,
): Promise<void> {
  await database.write
    .insertInto('compat_batches')
    .values({ ...row, state: 'creating' })
    .execute();
}

/** Parameters a staged cargo row binds (the wider of the two tables). */
const STAGED_COLUMNS = 11;

/**
 * Adds a chunk of a batch being created: its requests and their cargo, staged; renews the lease.
 * Throws CompatLeaseLost when the batch is no longer the creator's.
 */
export async function stageCompatRequests(
  database: Database,
  input: {
    batchId: string;
    lockedBy: string;
    lockedUntil: number;
    requests: CompatBatchRequestsTable[];
    staged: CompatStagedCargoTable[];
  },
): Promise<void> {
  await database.write.transaction().execute(async (tx) => {
    const renewed = await tx
      .updateTable('compat_batches')
      .set({ locked_until: input.lockedUntil })
      .where('id', '=', input.batchId)
      .where('state', '=', 'creating')
      .where('locked_by', '=', input.lockedBy)
      .executeTakeFirst();
    if (Number(renewed.numUpdatedRows) === 0) throw new CompatLeaseLost(input.batchId);
    for (const rows of statementChunks(input.requests, 4)) {
      await tx.insertInto('compat_batch_requests').values(rows).execute();
    }
    for (const rows of statementChunks(input.staged, STAGED_COLUMNS, (r) => r.request_bytes)) {
      await tx.insertInto('compat_staged_cargo').values(rows).execute();
    }
  });
}

/**
 * Makes a staged batch whole in one transaction: every staged cargo becomes a pending cargo with
 * its request (in submission order, so a cargo id's order is its position), the project's
 * storage and spend counters move as for POST /cargo/load, the batch becomes `open`, and other
 * processes' batchers are told. Either the whole batch exists afterwards, or nothing of it does.
 */
export async function publishCompatBatch(
  database: Database,
  input: {
    batchId: string;
    projectId: string;
    lockedBy: string;
    now: number;
    requestCount: number;
    resultTtlSeconds: number;
    /** What the cargo rows carry (requests and metadata), for the storage budget. */
    bytes: number;
    reservedNusd: number;
  },
): Promise<void> {
  await database.write.transaction().execute(async (tx) => {
    const opened = await tx
      .updateTable('compat_batches')
      .set({
        state: 'open',
        in_progress_at: input.now,
        request_count: input.requestCount,
        locked_by: null,
        locked_until: null,
      })
      .where('id', '=', input.batchId)
      .where('state', '=', 'creating')
      .where('locked_by', '=', input.lockedBy)
      .executeTakeFirst();
    if (Number(opened.numUpdatedRows) === 0) throw new CompatLeaseLost(input.batchId);
    await sql`insert into cargo (id, project_id, status, model, provider, provider_model, request_count, is_records,
        request_bytes, result_ttl_seconds, callback_url, callback, created_at, updated_at, reserved_nusd)
      select cargo_id, ${input.projectId}, 'pending', model, provider, provider_model, 1, 0,
        request_bytes, ${input.resultTtlSeconds}, null, null, created_at, ${input.now}, reserved_nusd
      from compat_staged_cargo where batch_id = ${input.batchId} order by position`.execute(tx);
    await sql`insert into cargo_requests (cargo_id, request, metadata)
      select cargo_id, request, metadata from compat_staged_cargo where batch_id = ${input.batchId}
      order by position`.execute(tx);
    const counters = [
      ...acceptedCargoStatements(database, [{ projectId: input.projectId, bytes: input.bytes, at: input.now }]),
      ...reservedCargoStatements(database, [{ projectId: input.projectId, reservedNusd: input.reservedNusd }]),
      ...newCargoNotice(database),
    ];
    for (const statement of counters) await tx.executeQuery(statement);
  });
}

/** Staged rows of a batch, once its cargo exist or it is given up: deleted in chunks of this many. */
const DROP_CHUNK = 5000;

/** Deletes what was staged for a batch, a chunk per statement (each its own transaction). */
export async function dropStagedCargo(database: Database, batchId: string): Promise<void> {
  for (;;) {
    const result = await database.write
      .deleteFrom('compat_staged_cargo')
      .where('batch_id', '=', batchId)
      .where(
        'position',
        'in',
        database.write
          .selectFrom('compat_staged_cargo')
          .select('position')
          .where('batch_id', '=', batchId)
          .orderBy('position')
          .limit(DROP_CHUNK),
      )
      .executeTakeFirst();
    if (Number(result.numDeletedRows) < DROP_CHUNK) return;
  }
}

/**
 * An OpenAI batch whose lines were refused: `failed` with its errors, and nothing of it staged.
 * Throws CompatLeaseLost when the batch is no longer the creator's.
 */
export async function failCompatBatch(
  database: Database,
  input: { batchId: string; lockedBy: string; now: number; errors: string },
): Promise<void> {
  await database.write.transaction().execute(async (tx) => {
    const failed = await tx
      .updateTable('compat_batches')
      .set({ state: 'failed', failed_at: input.now, errors: input.errors, locked_by: null, locked_until: null })
      .where('id', '=', input.batchId)
      .where('state', '=', 'creating')
      .where('locked_by', '=', input.lockedBy)
      .executeTakeFirst();
    if (Number(failed.numUpdatedRows) === 0) throw new CompatLeaseLost(input.batchId);
    await tx.deleteFrom('compat_staged_cargo').where('batch_id', '=', input.batchId).execute();
    await tx.deleteFrom('compat_batch_requests').where('batch_id', '=', input.batchId).execute();
  });
}

/**
 * Deletes a batch with its request list and anything staged, in one transaction (a batch given
 * up while being created, a deleted Anthropic batch, a batch past its retention). Its cargo stay.
 * `onlyCreating` deletes it only while it is still being created.
 */
export async function deleteCompatBatch(
  database: Database,
  batchId: string,
  options: { onlyCreating?: boolean } = {},
): Promise<boolean> {
  return database.write.transaction().execute(async (tx) => {
    if (options.onlyCreating) {
      const row = await tx.selectFrom('compat_batches').select('state').where('id', '=', batchId).executeTakeFirst();
      if (row?.state !== 'creating') return false;
    }
    await tx.deleteFrom('compat_staged_cargo').where('batch_id', '=', batchId).execute();
    await tx.deleteFrom('compat_batch_requests').where('batch_id', '=', batchId).execute();
    const gone = await tx.deleteFrom('compat_batches').where('id', '=', batchId).executeTakeFirst();
    return Number(gone.numDeletedRows) > 0;
  });
}

/** A project's visible batch of one API (not one being created), or undefined. */
export async function findCompatBatch(
  database: Database,
  input: { projectId: string; api: CompatApi; id: string },
): Promise<CompatBatchRow | undefined> {
  return database.read
    .selectFrom('compat_batches')
    .selectAll()
    .where('id', '=', input.id)
    .where('project_id', '=', input.projectId)
    .where('api', '=', input.api)
    .where('state', '<>', 'creating')
    .executeTakeFirst();
}

/**
 * A page of a project's visible batches of one API, newest first: below `afterId` (older), or the
 * page just above `beforeId` (newer); `hasMore` says whether more lie further that way.
 */
export async function listCompatBatches(
  database: Database,
  input: { projectId: string; api: CompatApi; limit: number; afterId?: string; beforeId?: string },
): Promise<{ rows: CompatBatchRow[]; hasMore: boolean }> {
  let query = database.read
    .selectFrom('compat_batches')
    .selectAll()
    .where('project_id', '=', input.projectId)
    .where('api', '=', input.api)
    .where('state', '<>', 'creating');
  if (input.beforeId !== undefined) {
    const rows = await query
      .where('id', '>', input.beforeId)
      .orderBy('id', 'asc')
      .limit(input.limit + 1)
      .execute();
    return { rows: rows.slice(0, input.limit).reverse(), hasMore: rows.length > input.limit };
  }
  if (input.afterId !== undefined) query = query.where('id', '<', input.afterId);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(input.limit + 1)
    .execute();
  return { rows: rows.slice(0, input.limit), hasMore: rows.length > input.limit };
}

/** Where a batch's requests are, and when the last one ended. */
export interface CompatCounts {
  processing: number;
  succeeded: number;
  errored: number;
  canceled: number;
  expired: number;
  /** When the latest result was stored (epoch ms), null when none is. */
  lastResultAt: number | null;
}

/**
 * Counts a batch's requests by outcome, in one pass over its requests, their cargo and results:
 * the SQL twin of compat/request-outcome.ts (a request with a result row is terminal; `canceled`
 * and `canceled: …`, `expired: …` texts say how it ended).
 */
export async function countCompatRequests(database: Database, batchId: string): Promise<CompatCounts> {
  const { rows } = await sql<Record<keyof CompatCounts | 'total', string | number | null>>`
    select count(*) as total,
      sum(case when r.cargo_id is null then 1 else 0 end) as processing,
      sum(case when r.success = 1 then 1 else 0 end) as succeeded,
      sum(case when r.success = 0 and (r.error_message = 'canceled' or r.error_message like 'canceled:%') then 1 else 0 end)
        as canceled,
      sum(case when r.success = 0 and r.error_message like 'expired:%' then 1 else 0 end) as expired,
      max(r.created_at) as "lastResultAt"
    from compat_batch_requests q
    join cargo c on c.id = q.cargo_id
    left join results r on r.cargo_id = c.id
    where q.batch_id = ${batchId}`.execute(database.read);
  const row = rows[0];
  const n = (value: string | number | null | undefined) => Number(value ?? 0);
  const total = n(row?.total);
  const counts = {
    processing: n(row?.processing),
    succeeded: n(row?.succeeded),
    canceled: n(row?.canceled),
    expired: n(row?.expired),
  };
  return {
    ...counts,
    errored: total - counts.processing - counts.succeeded - counts.canceled - counts.expired,
    lastResultAt: row?.lastResultAt == null ? null : n(row.lastResultAt),
  };
}

/**
 * Ends an open batch whose requests are all terminal: its counts frozen, its files (OpenAI) set.
 * With `lockedBy`, only under that lease (the files were made under it). False when another
 * request or process ended it first.
 */
export async function endCompatBatch(
  database: Database,
  input: {
    batchId: string;
    endedAt: number;
    counts: Pick<CompatCounts, 'succeeded' | 'errored' | 'canceled' | 'expired'>;
    files?: { outputFileId: string | null; errorFileId: string | null; lockedBy: string };
  },
): Promise<boolean> {
  let query = database.write
    .updateTable('compat_batches')
    .set({
      state: 'ended',
      ended_at: input.endedAt,
      succeeded: input.counts.succeeded,
      errored: input.counts.errored,
      canceled: input.counts.canceled,
      expired: input.counts.expired,
      output_file_id: input.files?.outputFileId ?? null,
      error_file_id: input.files?.errorFileId ?? null,
      locked_by: null,
      locked_until: null,
    })
    .where('id', '=', input.batchId)
    .where('state', '=', 'open');
  if (input.files) query = query.where('locked_by', '=', input.files.lockedBy);
  return Number((await query.executeTakeFirst()).numUpdatedRows) > 0;
}

/** Takes the lease of an open batch (to make its files) unless another holder's is running. */
export async function claimCompatBatch(
  database: Database,
  input: { batchId: string; lockedBy: string; now: number; until: number },
): Promise<boolean> {
  const claimed = await database.write
    .updateTable('compat_batches')
    .set({ locked_by: input.lockedBy, locked_until: input.until })
    .where('id', '=', input.batchId)
    .where('state', '=', 'open')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', input.now)]))
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) > 0;
}

/** Gives back a lease taken with claimCompatBatch (its work failed). */
export async function releaseCompatBatch(database: Database, batchId: string, lockedBy: string): Promise<void> {
  await database.write
    .updateTable('compat_batches')
    .set({ locked_by: null, locked_until: null })
    .where('id', '=', batchId)
    .where('locked_by', '=', lockedBy)
    .execute();
}

/** Records that an open batch's cancel was asked (once: the first time stays). */
export async function requestCompatCancel(database: Database, batchId: string, now: number): Promise<void> {
  await database.write
    .updateTable('compat_batches')
    .set({ cancel_requested_at: now })
    .where('id', '=', batchId)
    .where('cancel_requested_at', 'is', null)
    .where('state', '=', 'open')
    .execute();
}

/** Every cargo the cancel could stop has been canceled. */
export async function markCompatCancelDone(database: Database, batchId: string): Promise<void> {
  await database.write.updateTable('compat_batches').set({ cancel_done: 1 }).where('id', '=', batchId).execute();
}

/** Rows of a batch read a page at a time. */
const PAGE = 5000;

/** The cargo ids of a batch that are still pending or batched (those a cancel may stop), in pages. */
export async function* cancelableCargoIds(database: Database, batchId: string): AsyncGenerator<string[]> {
  let after = -1;
  for (;;) {
    const rows = await database.read
      .selectFrom('compat_batch_requests as q')
      .innerJoin('cargo as c', 'c.id', 'q.cargo_id')
      .select(['q.position', 'q.cargo_id', 'c.status'])
      .where('q.batch_id', '=', batchId)
      .where('q.position', '>', after)
      .orderBy('q.position')
      .limit(PAGE)
      .execute();
    const open: CargoStatus[] = ['pending', 'batched'];
    const ids = rows.filter((r) => open.includes(r.status)).map((r) => r.cargo_id);
    if (ids.length > 0) yield ids;
    if (rows.length < PAGE) return;
    after = Number(rows[rows.length - 1]?.position);
  }
}

/** One request of a batch with its cargo's status and result. */
export interface CompatRequestRow {
  position: number;
  customId: string;
  cargoId: string;
  status: CargoStatus;
  success: number | null;
  response: string | null;
  errorMessage: string | null;
  resultAt: number | null;
}

/** A batch's requests from `afterPosition` on, in submission order, with their results: one page of `size`. */
export async function compatRequestPage(
  database: Database,
  input: { batchId: string; afterPosition: number; size: number },
): Promise<CompatRequestRow[]> {
  const rows = await database.read
    .selectFrom('compat_batch_requests as q')
    .innerJoin('cargo as c', 'c.id', 'q.cargo_id')
    .leftJoin('results as r', 'r.cargo_id', 'c.id')
    .select([
      'q.position',
      'q.custom_id',
      'q.cargo_id',
      'c.status',
      'r.success',
      'r.response',
      'r.error_message',
      'r.created_at',
    ])
    .where('q.batch_id', '=', input.batchId)
    .where('q.position', '>', input.afterPosition)
    .orderBy('q.position')
    .limit(input.size)
    .execute();
  return rows.map((r) => ({
    position: Number(r.position),
    customId: r.custom_id,
    cargoId: r.cargo_id,
    status: r.status,
    success: r.success === null ? null : Number(r.success),
    response: r.response,
    errorMessage: r.error_message,
    resultAt: r.created_at === null ? null : Number(r.created_at),
  }));
}

/** Batches being created whose creator's lease lapsed (a crash, a client gone): for the sweeper. */
export async function abandonedCompatBatches(database: Database, now: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_batches')
    .select('id')
    .where('state', '=', 'creating')
    .where('locked_until', '<', now)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Batches whose cancel was asked before `before` and not seen through (a crash mid-cancel). */
export async function unfinishedCompatCancels(
  database: Database,
  before: number,
  limit: number,
): Promise<CompatBatchRow[]> {
  return database.read
    .selectFrom('compat_batches')
    .selectAll()
    .where('cancel_requested_at', '<', before)
    .where('cancel_done', '=', 0)
    .limit(limit)
    .execute();
}

/** Batches made whole (or given up) that still have staged rows (a crash right after their creation). */
export async function batchesWithLeftoverStaging(database: Database, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_staged_cargo as s')
    .innerJoin('compat_batches as b', 'b.id', 's.batch_id')
    .select('s.batch_id')
    .distinct()
    .where('b.state', '<>', 'creating')
    .limit(limit)
    .execute();
  return rows.map((r) => r.batch_id);
}

/** Visible batches created before `before` (past their retention). */
export async function expiredCompatBatches(database: Database, before: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_batches')
    .select('id')
    .where('created_at', '<', before)
    .where('state', '<>', 'creating')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * When the sweeper has batch work next: a creator's lease lapses, a cancel is due to be seen
 * through (`cancelGraceMs` after it was asked), a batch passes its retention.
 */
export async function nextCompatBatchDue(
  database: Database,
  input: { cancelGraceMs: number; retentionMs: number },
): Promise<number | null> {
  const { rows } = await sql<{ at: string | number | null }>`
    select min(at) as at from (
      select min(locked_until) as at from compat_batches where state = 'creating'
      union all select min(cancel_requested_at) + ${input.cancelGraceMs} as at from compat_batches
        where cancel_requested_at is not null and cancel_done = 0
      union all select min(created_at) + ${input.retentionMs} as at from compat_batches
    ) due`.execute(database.read);
  const at = rows[0]?.at;
  return at == null ? null : Number(at);
}
