/** A real-time batch's requests as rows: stored at submit, watched while they run, read back, canceled, removed. */
import { sql } from 'kysely';
import type { EnqueueInput, SettledRequest } from '../../domain/realtime-requests.js';
import type { Database } from '../database.js';
import { pagesById } from '../pages.js';

/** Rows per insert, and per page read back. */
const CHUNK = 500;

/**
 * Stores a batch's requests, `CHUNK` rows a transaction; a submission repeated after a crash keeps
 * the rows it stored before (and whatever the runner did with them).
 */
export async function enqueueRealtimeRequests(database: Database, input: EnqueueInput): Promise<void> {
  let rows: { custom_id: string; input: string }[] = [];
  const flush = async () => {
    if (rows.length === 0) return;
    const chunk = rows;
    rows = [];
    await database.write
      .insertInto('realtime_requests')
      .values(
        chunk.map((r) => ({
          batch_id: input.batchId,
          custom_id: r.custom_id,
          endpoint: input.endpoint,
          model: input.model,
          input: r.input,
          state: 'queued' as const,
          next_attempt_at: input.now,
          deadline_at: input.deadlineAt,
          locked_by: null,
          locked_until: null,
          response: null,
          error: null,
          updated_at: input.now,
        })),
      )
      .onConflict((oc) => oc.columns(['batch_id', 'custom_id']).doNothing())
      .execute();
  };
  for await (const request of input.requests) {
    rows.push({ custom_id: request.customId, input: request.input });
    if (rows.length >= CHUNK) await flush();
  }
  await flush();
}

/**
 * The batch's requests still queued, and the earliest due time among them: a request in flight was
 * due when it was claimed, so it counts as due now (its answer may come any moment), not at the
 * end of its lease.
 */
export async function realtimeBatchProgress(
  database: Database,
  batchId: string,
): Promise<{ queued: number; nextAt: number | null }> {
  const { rows } = await sql<{ n: number | string; at: number | string | null }>`
    select count(*) as n, min(next_attempt_at) as at
    from realtime_requests where batch_id = ${batchId} and state = 'queued'`.execute(database.read);
  const row = rows[0];
  return { queued: Number(row?.n ?? 0), nextAt: row?.at == null ? null : Number(row.at) };
}

/** When an endpoint next has a request to send: a due try, or a lease that lapses. */
export async function nextRealtimeDueAt(database: Database, endpoint: string): Promise<number | null> {
  const { rows } = await sql<{ at: number | string | null }>`
    select min(case when locked_until is not null and locked_until > next_attempt_at then locked_until
                    else next_attempt_at end) as at
    from realtime_requests where endpoint = ${endpoint} and state = 'queued'`.execute(database.read);
  const at = rows[0]?.at;
  return at == null ? null : Number(at);
}

/** The batch's settled requests, a page at a time in custom id order. */
export async function* realtimeBatchResults(database: Database, batchId: string): AsyncGenerator<SettledRequest> {
  const pages = pagesById(CHUNK, async (after, size) => {
    const rows = await database.read
      .selectFrom('realtime_requests')
      .select(['custom_id', 'state', 'response', 'error'])
      .where('batch_id', '=', batchId)
      .where('state', '<>', 'queued')
      .where('custom_id', '>', after)
      .orderBy('custom_id')
      .limit(size)
      .execute();
    return rows.map((r) => ({ id: r.custom_id, ...r }));
  });
  for await (const row of pages) {
    yield {
      customId: row.custom_id,
      state: row.state as SettledRequest['state'],
      response: row.response,
      error: row.error,
    };
  }
}

/** The batch's requests that are not in flight are canceled; those in flight settle as they end. */
export async function cancelRealtimeRequests(database: Database, batchId: string, now: number): Promise<void> {
  await database.write
    .updateTable('realtime_requests')
    .set({ state: 'canceled', updated_at: now })
    .where('batch_id', '=', batchId)
    .where('state', '=', 'queued')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .execute();
}

/** Removes the batch's requests once its results are collected. */
export async function removeRealtimeRequests(database: Database, batchId: string): Promise<void> {
  await database.write.deleteFrom('realtime_requests').where('batch_id', '=', batchId).execute();
}
