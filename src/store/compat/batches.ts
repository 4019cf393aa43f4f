/**
 * Provider-compatible batches (migrations 023, 025) once visible: found, listed, counted, ended
 * (with their files), leased and canceled. Creating them: create.ts; deleting: delete.ts; their
 * requests: requests.ts; the sweeper's queries: sweep.ts.
 */
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Database } from '../database.js';
import type { CompatBatchesTable, Schema } from '../schema.js';
import { readyCompatFile } from './files.js';

export type CompatApi = CompatBatchesTable['api'];
export type CompatBatchRow = Selectable<CompatBatchesTable>;

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

type BatchConditions = ExpressionBuilder<Schema, 'compat_batches'>;

/** A batch being created and not deleted, its publish begun (committed to) or not. */
function creating(eb: BatchConditions, publishing: boolean) {
  return [
    eb('state', '=', 'creating'),
    eb('publish_started_at', publishing ? 'is not' : 'is', null),
    eb('deleted_at', 'is', null),
  ];
}

/** A batch being created under `lockedBy`'s lease (create.ts: each step of its creator). */
export function heldByCreator(eb: BatchConditions, input: { batchId: string; lockedBy: string }, publishing: boolean) {
  return eb.and([eb('id', '=', input.batchId), ...creating(eb, publishing), eb('locked_by', '=', input.lockedBy)]);
}

/**
 * A batch being created whose creator's lease lapsed before `now` (it died, or its client went):
 * the sweeper deletes it, or finishes its publish once that began.
 */
export function lapsedCreation(eb: BatchConditions, now: number, publishing: boolean) {
  return eb.and([...creating(eb, publishing), eb('locked_until', '<', now)]);
}

/**
 * Ends an open batch whose requests are all terminal; false when another request or process
 * ended it first (nothing changes). An OpenAI batch ends under `files.lockedBy`'s lease with its
 * output and error files (written, not yet ready): they become ready, counted as held bytes of the
 * project, in the transaction that ends the batch, so an ended batch always has its files.
 */
export async function endCompatBatch(
  database: Database,
  input: {
    batchId: string;
    endedAt: number;
    files?: {
      projectId: string;
      lockedBy: string;
      output: { id: string; bytes: number } | null;
      error: { id: string; bytes: number } | null;
    };
  },
): Promise<boolean> {
  const { files } = input;
  return database.write.transaction().execute(async (tx) => {
    let end = tx
      .updateTable('compat_batches')
      .set({
        state: 'ended',
        ended_at: input.endedAt,
        ...(files && { output_file_id: files.output?.id ?? null, error_file_id: files.error?.id ?? null }),
        locked_by: null,
        locked_until: null,
      })
      .where('id', '=', input.batchId)
      .where('state', '=', 'open');
    if (files) end = end.where('locked_by', '=', files.lockedBy);
    const ended = await end.executeTakeFirst();
    if (Number(ended.numUpdatedRows) === 0) return false;
    if (!files) return true;
    for (const file of [files.output, files.error]) {
      if (file) await readyCompatFile(tx, database, { fileId: file.id, projectId: files.projectId, bytes: file.bytes });
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
    .where('deleted_at', 'is', null)
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
