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
import { readyCompatFile } from './files.js';

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
    // The metadata goes beside the cargo, not after its request text (migration 025).
    await sql`insert into cargo_requests (cargo_id, request, metadata)
      select cargo_id, request, null from compat_staged_cargo where batch_id = ${input.batchId}
      order by position`.execute(tx);
    await sql`insert into compat_cargo (cargo_id, batch_id, metadata)
      select cargo_id, batch_id, metadata from compat_staged_cargo where batch_id = ${input.batchId}
      order by position`.execute(tx);
    const counters = [
      ...acceptedCargoStatements(database, [{ projectId: input.projectId, bytes: input.bytes, at: input.now }]),
      ...reservedCargoStatements(database, [{ projectId: input.projectId, reservedNusd: input.reservedNusd }]),
      ...newCargoNotice(database),
    ];
    for (const statement of counters) await tx.executeQuery(statement);
  });
}

/** Rows of a batch (staged cargo, its request list) are deleted in chunks of this many, each its own transaction. */
const DROP_CHUNK = 2000;

/** Deletes a batch's rows of `table`, a chunk per statement, so no one transaction holds the writer long. */
async function dropBatchRows(
  database: Database,
  table: 'compat_staged_cargo' | 'compat_batch_requests',
  batchId: string,
): Promise<void> {
  for (;;) {
    const result = await database.write
      .deleteFrom(table)
      .where('batch_id', '=', batchId)
      .where(
        'position',
        'in',
        database.write
          .selectFrom(table)
          .select('position')
          .where('batch_id', '=', batchId)
          .orderBy('position')
          .limit(DROP_CHUNK),
      )
      .executeTakeFirst();
    if (Number(result.numDeletedRows) < DROP_CHUNK) return;
  }
}

/** Deletes what was staged for a batch (its cargo exist now, or it failed), in chunks. */
export async function dropStagedCargo(database: Database, batchId: string): Promise<void> {
  await dropBatchRows(database, 'compat_staged_cargo', batchId);
}

/**
 * An OpenAI batch whose lines were refused: `failed` with its errors; what was staged for it is
 * dropped afterwards in chunks (the sweeper drops what a crash leaves). Throws CompatLeaseLost
 * when the batch is no longer the creator's.
 */
export async function failCompatBatch(
  database: Database,
  input: { batchId: string; lockedBy: string; now: number; errors: string },
): Promise<void> {
  const failed = await database.write
    .updateTable('compat_batches')
    .set({ state: 'failed', failed_at: input.now, errors: input.errors, locked_by: null, locked_until: null })
    .where('id', '=', input.batchId)
    .where('state', '=', 'creating')
    .where('locked_by', '=', input.lockedBy)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(failed.numUpdatedRows) === 0) throw new CompatLeaseLost(input.batchId);
  await dropBatchRows(database, 'compat_staged_cargo', input.batchId);
  await dropBatchRows(database, 'compat_batch_requests', input.batchId);
}

/** Which batches a deletion takes (each in one conditional statement, so a deletion never races a creator). */
export type CompatDeletion =
  /** The sweeper: a batch being created whose creator's lease lapsed before `now`. */
  | { kind: 'abandoned'; now: number }
  /** The creator giving its own batch up. */
  | { kind: 'given_up'; lockedBy: string }
  /** DELETE of an ended batch. */
  | { kind: 'ended' }
  /** A visible batch past its retention. */
  | { kind: 'expired' };

/**
 * Deletes a batch: hidden at once (`deleted_at`, and a creator's lease taken from it: its next
 * step throws CompatLeaseLost), then its staged rows and request list in chunks, then its row. A
 * crash in between leaves it hidden, and the sweeper finishes (purgeDeletedCompatBatches). Its
 * cargo stay. False when the batch is not one `which` takes.
 */
export async function deleteCompatBatch(
  database: Database,
  batchId: string,
  which: CompatDeletion,
  now: number,
): Promise<boolean> {
  let query = database.write
    .updateTable('compat_batches')
    .set({ deleted_at: now, locked_by: null, locked_until: null })
    .where('id', '=', batchId)
    .where('deleted_at', 'is', null);
  if (which.kind === 'abandoned') {
    query = query.where('state', '=', 'creating').where('locked_until', '<', which.now);
  } else if (which.kind === 'given_up') {
    query = query.where('state', '=', 'creating').where('locked_by', '=', which.lockedBy);
  } else if (which.kind === 'ended') {
    query = query.where('state', '=', 'ended');
  } else {
    query = query.where('state', '<>', 'creating');
  }
  if (Number((await query.executeTakeFirst()).numUpdatedRows) === 0) return false;
  await purgeDeletedCompatBatch(database, batchId);
  return true;
}

/** Deletes the rows of a batch hidden by deleteCompatBatch, in chunks, then the batch itself. */
export async function purgeDeletedCompatBatch(database: Database, batchId: string): Promise<void> {
  await dropBatchRows(database, 'compat_staged_cargo', batchId);
  await dropBatchRows(database, 'compat_batch_requests', batchId);
  await database.write
    .deleteFrom('compat_batches')
    .where('id', '=', batchId)
    .where('deleted_at', 'is not', null)
    .execute();
}

/** Batches hidden for deletion whose rows a crash left: for the sweeper. */
export async function deletedCompatBatches(database: Database, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_batches')
    .select('id')
    .where('deleted_at', 'is not', null)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
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
    .where('deleted_at', 'is', null)
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
    .where('state', '<>', 'creating')
    .where('deleted_at', 'is', null);
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

/** Where a batch's requests are. */
export interface CompatCounts {
  processing: number;
  succeeded: number;
  errored: number;
  canceled: number;
  expired: number;
}

/** A batch's counts, kept on its row by the trigger on `results` (migration 025): no cargo is read. */
export function compatCountsOf(row: CompatBatchRow): CompatCounts {
  const ended = row.succeeded + row.errored + row.canceled + row.expired;
  return {
    processing: Math.max(0, row.request_count - ended),
    succeeded: row.succeeded,
    errored: row.errored,
    canceled: row.canceled,
    expired: row.expired,
  };
}

/**
 * Ends an open batch whose requests are all terminal (anthropic: no files). False when another
 * request or process ended it first.
 */
export async function endCompatBatch(
  database: Database,
  input: { batchId: string; endedAt: number },
): Promise<boolean> {
  const ended = await database.write
    .updateTable('compat_batches')
    .set({ state: 'ended', ended_at: input.endedAt, locked_by: null, locked_until: null })
    .where('id', '=', input.batchId)
    .where('state', '=', 'open')
    .executeTakeFirst();
  return Number(ended.numUpdatedRows) > 0;
}

/**
 * Ends an open batch under `lockedBy`'s lease together with its output and error files (written,
 * not yet ready): the files become ready, counted as held bytes of the project, and the batch
 * ends in one transaction, so an ended batch always has its files. False when the lease was lost
 * (nothing changes).
 */
export async function endCompatBatchWithFiles(
  database: Database,
  input: {
    batchId: string;
    projectId: string;
    endedAt: number;
    lockedBy: string;
    outputFile: { id: string; bytes: number } | null;
    errorFile: { id: string; bytes: number } | null;
  },
): Promise<boolean> {
  return database.write.transaction().execute(async (tx) => {
    const ended = await tx
      .updateTable('compat_batches')
      .set({
        state: 'ended',
        ended_at: input.endedAt,
        output_file_id: input.outputFile?.id ?? null,
        error_file_id: input.errorFile?.id ?? null,
        locked_by: null,
        locked_until: null,
      })
      .where('id', '=', input.batchId)
      .where('state', '=', 'open')
      .where('locked_by', '=', input.lockedBy)
      .executeTakeFirst();
    if (Number(ended.numUpdatedRows) === 0) return false;
    for (const file of [input.outputFile, input.errorFile]) {
      if (file) await readyCompatFile(tx, database, { fileId: file.id, projectId: input.projectId, bytes: file.bytes });
    }
    return true;
  });
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
    .where('deleted_at', 'is', null)
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
    .where('deleted_at', 'is', null)
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
    .where('deleted_at', 'is', null)
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
      union all select min(deleted_at) as at from compat_batches where deleted_at is not null
    ) due`.execute(database.read);
  const at = rows[0]?.at;
  return at == null ? null : Number(at);
}
