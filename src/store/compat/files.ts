/**
 * OpenAI files of the provider-compatible endpoints (migration 023), stored in the database in
 * chunks so that every API process of a deployment serves every file: written a chunk at a time
 * under a lease (`writing`, invisible), made `ready` in one statement, read back a chunk at a time.
 */
import { type Selectable, sql, type Transaction } from 'kysely';
import { deleteInChunks } from '../chunks.js';
import type { Database } from '../database.js';
import type { CompatFilesTable, Schema } from '../schema.js';
import { acceptedCargoStatements, heldBytesStatements } from '../storage-usage.js';

export type CompatFileRow = Selectable<CompatFilesTable>;

/** The file is no longer its writer's (its lease lapsed and the sweeper deleted it). */
export class CompatFileLost extends Error {
  constructor(fileId: string) {
    super(`file ${fileId} was lost while it was written`);
    this.name = 'CompatFileLost';
  }
}

export async function beginCompatFile(
  database: Database,
  row: Pick<CompatFileRow, 'id' | 'project_id' | 'purpose' | 'filename' | 'created_at' | 'expires_at' | 'locked_until'>,
): Promise<void> {
  await database.write
    .insertInto('compat_files')
    .values({ ...row, state: 'writing', bytes: 0 })
    .execute();
}

/** Appends one chunk to a file being written and renews its lease; throws CompatFileLost when it is gone. */
export async function appendCompatFileChunk(
  database: Database,
  input: { fileId: string; seq: number; data: Buffer; lockedUntil: number },
): Promise<void> {
  await database.write.transaction().execute(async (tx) => {
    const renewed = await tx
      .updateTable('compat_files')
      .set({ locked_until: input.lockedUntil })
      .where('id', '=', input.fileId)
      .where('state', '=', 'writing')
      .executeTakeFirst();
    if (Number(renewed.numUpdatedRows) === 0) throw new CompatFileLost(input.fileId);
    await tx
      .insertInto('compat_file_chunks')
      .values({ file_id: input.fileId, seq: input.seq, data: input.data })
      .execute();
  });
}

/**
 * Makes an uploaded file visible with its size, counted against the project's storage budget as
 * bytes accepted today and held (a file barge makes is made ready with its batch's end:
 * readyCompatFile). Throws CompatFileLost when the file is gone.
 */
export async function finishCompatUpload(
  database: Database,
  input: { fileId: string; projectId: string; bytes: number; now: number },
): Promise<void> {
  await database.write.transaction().execute(async (tx) => {
    await markReady(tx, input);
    const counters = acceptedCargoStatements(database, [
      { projectId: input.projectId, bytes: input.bytes, at: input.now },
    ]);
    for (const statement of counters) await tx.executeQuery(statement);
  });
}

/**
 * Inside a transaction: a file barge made (a batch's output) becomes visible, its bytes held by
 * the project. Throws CompatFileLost when the file is gone.
 */
export async function readyCompatFile(
  tx: Transaction<Schema>,
  database: Database,
  input: { fileId: string; projectId: string; bytes: number },
): Promise<void> {
  await markReady(tx, input);
  for (const statement of heldBytesStatements(database, input.projectId, input.bytes)) await tx.executeQuery(statement);
}

async function markReady(tx: Transaction<Schema>, input: { fileId: string; bytes: number }): Promise<void> {
  const done = await tx
    .updateTable('compat_files')
    .set({ state: 'ready', bytes: input.bytes, locked_until: null })
    .where('id', '=', input.fileId)
    .where('state', '=', 'writing')
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) === 0) throw new CompatFileLost(input.fileId);
}

/** A file's chunks are deleted this many per transaction (1 MiB each: 16 MiB of pages freed at a time). */
const DELETE_CHUNKS = 16;

/**
 * Deletes a file: hidden at once (a ready file becomes an unfinished one whose lease has lapsed,
 * its bytes released from its project's storage, in one transaction), then its chunks a few per
 * transaction, then its row with any chunk written meanwhile. A crash in between leaves an
 * unfinished file, which the sweeper deletes. `lapsedBefore` (the sweeper) takes an unfinished
 * file only when its lease lapsed before then, never one still being written. False when there
 * was no such file.
 */
export async function deleteCompatFile(
  database: Database,
  fileId: string,
  options: { lapsedBefore?: number } = {},
): Promise<boolean> {
  const taken = await database.write.transaction().execute(async (tx) => {
    const file = await tx
      .selectFrom('compat_files')
      .select(['project_id', 'state', 'bytes', 'locked_until'])
      .where('id', '=', fileId)
      .executeTakeFirst();
    if (!file) return false;
    if (file.state === 'writing') {
      if (options.lapsedBefore === undefined) return true;
      const lapsed = await tx
        .updateTable('compat_files')
        .set({ locked_until: 0 })
        .where('id', '=', fileId)
        .where('state', '=', 'writing')
        .where('locked_until', '<', options.lapsedBefore)
        .executeTakeFirst();
      return Number(lapsed.numUpdatedRows) > 0;
    }
    await tx
      .updateTable('compat_files')
      .set({ state: 'writing', locked_until: 0 })
      .where('id', '=', fileId)
      .where('state', '=', 'ready')
      .execute();
    for (const statement of heldBytesStatements(database, file.project_id, -Number(file.bytes))) {
      await tx.executeQuery(statement);
    }
    return true;
  });
  if (!taken) return false;
  await deleteInChunks(database, {
    table: 'compat_file_chunks',
    key: 'file_id',
    id: fileId,
    order: 'seq',
    size: DELETE_CHUNKS,
  });
  await database.write.transaction().execute(async (tx) => {
    await tx.deleteFrom('compat_file_chunks').where('file_id', '=', fileId).execute();
    await tx.deleteFrom('compat_files').where('id', '=', fileId).where('state', '=', 'writing').execute();
  });
  return true;
}

/** A project's ready file, or undefined. */
export async function findCompatFile(
  database: Database,
  input: { projectId: string; id: string },
): Promise<CompatFileRow | undefined> {
  return database.read
    .selectFrom('compat_files')
    .selectAll()
    .where('id', '=', input.id)
    .where('project_id', '=', input.projectId)
    .where('state', '=', 'ready')
    .executeTakeFirst();
}

/** A page of a project's ready files, by id (newest first unless `ascending`), after the cursor. */
export async function listCompatFiles(
  database: Database,
  input: { projectId: string; limit: number; ascending: boolean; after?: string; purpose?: string },
): Promise<{ rows: CompatFileRow[]; hasMore: boolean }> {
  let query = database.read
    .selectFrom('compat_files')
    .selectAll()
    .where('project_id', '=', input.projectId)
    .where('state', '=', 'ready');
  if (input.purpose !== undefined) query = query.where('purpose', '=', input.purpose as CompatFileRow['purpose']);
  if (input.after !== undefined) query = query.where('id', input.ascending ? '>' : '<', input.after);
  const rows = await query
    .orderBy('id', input.ascending ? 'asc' : 'desc')
    .limit(input.limit + 1)
    .execute();
  return { rows: rows.slice(0, input.limit), hasMore: rows.length > input.limit };
}

/** A file's chunks in order, one read a chunk (1 MiB each, compat/openai/file-writer.ts). */
export async function* compatFileChunks(database: Database, fileId: string): AsyncGenerator<Buffer> {
  let after = -1;
  for (;;) {
    const row = await database.read
      .selectFrom('compat_file_chunks')
      .select(['seq', 'data'])
      .where('file_id', '=', fileId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(1)
      .executeTakeFirst();
    if (!row) return;
    after = Number(row.seq);
    yield Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data as Uint8Array);
  }
}

/** Files written under a lease that lapsed (a crash mid-upload), for the sweeper. */
export async function abandonedCompatFiles(database: Database, now: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_files')
    .select('id')
    .where('state', '=', 'writing')
    .where('locked_until', '<', now)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Ready files past their retention, for the purge. */
export async function expiredCompatFiles(database: Database, now: number, limit: number): Promise<string[]> {
  const rows = await database.read
    .selectFrom('compat_files')
    .select('id')
    .where('expires_at', '<=', now)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** When the next file falls due for the sweeper: a lease lapses or a retention ends. */
export async function nextCompatFileDue(database: Database): Promise<number | null> {
  const { rows } = await sql<{ at: string | number | null }>`
    select min(at) as at from (
      select min(locked_until) as at from compat_files where state = 'writing'
      union all select min(expires_at) as at from compat_files
    ) due`.execute(database.read);
  const at = rows[0]?.at;
  return at == null ? null : Number(at);
}
