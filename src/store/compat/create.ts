/**
 * Creating a provider-compatible batch (migrations 023, 025): begun invisible (`creating`) under
 * its creator's lease, its requests staged a chunk at a time as they are checked, then made
 * whole: the publish begins in one transaction (counters, request count), creates the cargo a
 * bounded chunk per transaction, and opens the batch. Or it fails (OpenAI lines refused).
 */
import { type Insertable, sql } from 'kysely';
import { statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import { newCargoNotice } from '../notify.js';
import type { CompatBatchesTable, CompatBatchRequestsTable, CompatStagedCargoTable } from '../schema.js';
import { reservedCargoStatements } from '../spend-usage.js';
import { acceptedCargoStatements } from '../storage-usage.js';
import { heldByCreator, lapsedCreation } from './batches.js';
import { dropBatchRows } from './delete.js';

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
      .where((eb) => heldByCreator(eb, input, false))
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
 * The first step of making a staged batch whole, under the creator's lease: the batch is
 * committed to (`publish_started_at`, its request count), and the project's storage and spend
 * counters take the whole batch, in one transaction. From here on the batch is never given up:
 * publishCompatChunk creates its cargo a bounded chunk per transaction, and if the creator dies
 * the sweeper takes the lease once it lapses and goes on where it stopped.
 */
export async function beginCompatPublish(
  database: Database,
  input: {
    batchId: string;
    projectId: string;
    lockedBy: string;
    lockedUntil: number;
    now: number;
    requestCount: number;
    /** What the cargo rows carry (requests and metadata), for the storage budget. */
    bytes: number;
    reservedNusd: number;
  },
): Promise<void> {
  await database.write.transaction().execute(async (tx) => {
    const begun = await tx
      .updateTable('compat_batches')
      .set({ publish_started_at: input.now, request_count: input.requestCount, locked_until: input.lockedUntil })
      .where((eb) => heldByCreator(eb, input, false))
      .executeTakeFirst();
    if (Number(begun.numUpdatedRows) === 0) throw new CompatLeaseLost(input.batchId);
    const counters = [
      ...acceptedCargoStatements(database, [{ projectId: input.projectId, bytes: input.bytes, at: input.now }]),
      ...reservedCargoStatements(database, [{ projectId: input.projectId, reservedNusd: input.reservedNusd }]),
    ];
    for (const statement of counters) await tx.executeQuery(statement);
  });
}

/** How much one publish transaction moves: at most this many staged cargo, or about this many bytes of requests. */
const PUBLISH_CHUNK = { rows: 1000, bytes: 8 * 1024 * 1024 };

/**
 * Moves the next chunk of a publishing batch's staged cargo (in submission order) into `cargo`,
 * `cargo_requests` and `compat_cargo` and deletes them from the staging, in one transaction
 * under the lease (renewed): a crash between two chunks loses nor doubles any. At most
 * `chunk.rows` rows, cut once they pass `chunk.bytes` (one larger request goes alone); the sizes
 * are read from an index, not from the rows. Resolves to how many moved (0: none was left).
 * Throws CompatLeaseLost when the lease is another's.
 */
export async function publishCompatChunk(
  database: Database,
  input: {
    batchId: string;
    lockedBy: string;
    lockedUntil: number;
    now: number;
    resultTtlSeconds: number;
    chunk?: { rows: number; bytes: number };
  },
): Promise<number> {
  const chunk = input.chunk ?? PUBLISH_CHUNK;
  return database.write.transaction().execute(async (tx) => {
    const batch = await tx
      .updateTable('compat_batches')
      .set({ locked_until: input.lockedUntil })
      .where((eb) => heldByCreator(eb, input, true))
      .returning('project_id')
      .executeTakeFirst();
    if (!batch) throw new CompatLeaseLost(input.batchId);
    const sizes = await tx
      .selectFrom('compat_staged_cargo')
      .select(['position', 'request_bytes'])
      .where('batch_id', '=', input.batchId)
      .orderBy('position')
      .limit(chunk.rows)
      .execute();
    if (sizes.length === 0) return 0;
    let take = 0;
    for (let bytes = 0; take < sizes.length && (take === 0 || bytes < chunk.bytes); take++) {
      bytes += Number(sizes[take]?.request_bytes);
    }
    const first = Number(sizes[0]?.position);
    const last = Number(sizes[take - 1]?.position);
    const range = sql`batch_id = ${input.batchId} and position between ${first} and ${last}`;
    await sql`insert into cargo (id, project_id, status, model, provider, provider_model, request_count, is_records,
        request_bytes, result_ttl_seconds, callback_url, callback, created_at, updated_at, reserved_nusd)
      select cargo_id, ${batch.project_id}, 'pending', model, provider, provider_model, 1, 0,
        request_bytes, ${input.resultTtlSeconds}, null, null, created_at, ${input.now}, reserved_nusd
      from compat_staged_cargo where ${range} order by position`.execute(tx);
    // The metadata goes beside the cargo, not after its request text (migration 025).
    await sql`insert into cargo_requests (cargo_id, request, metadata)
      select cargo_id, request, null from compat_staged_cargo where ${range} order by position`.execute(tx);
    await sql`insert into compat_cargo (cargo_id, batch_id, metadata)
      select cargo_id, batch_id, metadata from compat_staged_cargo where ${range} order by position`.execute(tx);
    await sql`delete from compat_staged_cargo where ${range}`.execute(tx);
    for (const statement of newCargoNotice(database)) await tx.executeQuery(statement);
    return take;
  });
}

/** The last step: a batch whose cargo all exist becomes `open` (visible), its lease given back. */
export async function openCompatBatch(
  database: Database,
  input: { batchId: string; lockedBy: string; now: number },
): Promise<void> {
  const opened = await database.write
    .updateTable('compat_batches')
    .set({ state: 'open', in_progress_at: input.now, locked_by: null, locked_until: null })
    .where((eb) => heldByCreator(eb, input, true))
    .executeTakeFirst();
  if (Number(opened.numUpdatedRows) === 0) throw new CompatLeaseLost(input.batchId);
}

/** Batches whose publish began and whose publisher's lease lapsed (it died between chunks): for the sweeper. */
export async function unfinishedCompatPublishes(database: Database, now: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_batches')
    .select('id')
    .where((eb) => lapsedCreation(eb, now, true))
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Takes over the publish of a batch whose publisher's lease lapsed; false when another did first. */
export async function takeOverCompatPublish(
  database: Database,
  input: { batchId: string; lockedBy: string; now: number; lockedUntil: number },
): Promise<boolean> {
  const taken = await database.write
    .updateTable('compat_batches')
    .set({ locked_by: input.lockedBy, locked_until: input.lockedUntil })
    .where('id', '=', input.batchId)
    .where((eb) => lapsedCreation(eb, input.now, true))
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) > 0;
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
    .where((eb) => heldByCreator(eb, input, false))
    .executeTakeFirst();
  if (Number(failed.numUpdatedRows) === 0) throw new CompatLeaseLost(input.batchId);
  await dropBatchRows(database, 'compat_staged_cargo', input.batchId);
  await dropBatchRows(database, 'compat_batch_requests', input.batchId);
}
