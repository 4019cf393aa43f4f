/**
 * The endpoint runner's one write, in one transaction and (on a SQLite file) one message to the
 * write thread: store how sent requests ended, lease the next due requests, and hold as many of
 * the endpoint's slots as this worker has requests leased. A worker sends a request only in a
 * slot it holds, so its sends never wait for this write: a slot an answer frees takes the next
 * leased request at once, and the write follows.
 *
 * The slots are `max_concurrency` rows per endpoint, each held by one worker under a lease: every
 * worker together never has more in flight than that. Slots are claimed FOR UPDATE SKIP LOCKED on
 * PostgreSQL; SQLite's write lock is the whole database's.
 */
import { type CompiledQuery, sql } from 'kysely';
import {
  type ClaimedRequest,
  REALTIME_EXPIRED_ERROR,
  type SettleAndClaimInput,
  type Settlement,
} from '../../domain/realtime-requests.js';
import type { Database } from '../database.js';

interface LeasedRow {
  batch_id: string;
  custom_id: string;
  model: string;
  input: string;
  attempts: number | string;
  deadline_at: number | string;
  state: string;
}

export async function settleAndClaimRealtime(
  database: Database,
  input: SettleAndClaimInput,
): Promise<{ claimed: ClaimedRequest[]; slots: number }> {
  const statements: CompiledQuery[] = [];
  if (input.ensureSlots) statements.push(ensureSlotsStatement(database, input));
  for (const s of input.settlements) statements.push(settleStatement(database, input.workerId, s, input.now));
  const claimAt = statements.length;
  statements.push(claimStatement(database, input));
  statements.push(...slotStatements(database, input));
  const results = await database.writeAll(statements);
  const leased = (results[claimAt] ?? []) as LeasedRow[];
  const slots = (results[results.length - 1] ?? []).length;
  return {
    slots,
    claimed: leased
      .filter((r) => r.state === 'queued')
      .map((r) => ({
        batchId: r.batch_id,
        customId: r.custom_id,
        model: r.model,
        input: r.input,
        attempts: Number(r.attempts),
        deadlineAt: Number(r.deadline_at),
        leasedUntil: input.now + input.requestLeaseMs,
      })),
  };
}

/** Slot rows 0 … max_concurrency - 1 of the endpoint. */
function ensureSlotsStatement(database: Database, input: SettleAndClaimInput): CompiledQuery {
  return database.write
    .insertInto('realtime_slots')
    .values(
      Array.from({ length: input.maxConcurrency }, (_, slot) => ({
        endpoint: input.endpoint,
        slot,
        locked_by: null,
        locked_until: null,
      })),
    )
    .onConflict((oc) => oc.columns(['endpoint', 'slot']).doNothing())
    .compile();
}

/**
 * One request's outcome, written only while this worker holds its lease and it is still queued: a
 * worker whose lease lapsed (another took the request over) stores nothing.
 */
function settleStatement(database: Database, workerId: string, s: Settlement, now: number): CompiledQuery {
  return database.write
    .updateTable('realtime_requests')
    .set((eb) => ({
      ...(s.kind === 'answered' && { state: 'answered', response: s.response, error: null }),
      ...(s.kind === 'failed' && { state: 'failed', error: s.error }),
      ...(s.kind === 'expired' && { state: 'expired', error: s.error }),
      ...(s.kind === 'retry' && { next_attempt_at: s.at, error: s.error }),
      // Never sent: the try it was leased for does not count.
      ...(s.kind === 'release' && { attempts: eb('attempts', '-', 1) }),
      locked_by: null,
      locked_until: null,
      updated_at: now,
    }))
    .where('batch_id', '=', s.batchId)
    .where('custom_id', '=', s.customId)
    .where('locked_by', '=', workerId)
    .where('state', '=', 'queued')
    .compile();
}

/**
 * Leases the oldest due requests, at most `limit`; one past its deadline is expired instead. A
 * lapsed lease (a worker that died) makes its row due again.
 */
function claimStatement(database: Database, input: SettleAndClaimInput): CompiledQuery {
  const { endpoint, now } = input;
  const postgres = database.dialect === 'postgres';
  const late = sql`deadline_at <= ${now}`;
  return sql`
    update realtime_requests set
      state = case when ${late} then 'expired' else state end,
      error = case when ${late} then cast(${REALTIME_EXPIRED_ERROR} as text) else error end,
      locked_by = case when ${late} then null else cast(${input.workerId} as text) end,
      locked_until = case when ${late} then null else cast(${now + input.requestLeaseMs} as bigint) end,
      attempts = case when ${late} then attempts else attempts + 1 end,
      updated_at = ${now}
    where (batch_id, custom_id) in (
      select batch_id, custom_id from realtime_requests
      where endpoint = ${endpoint} and state = 'queued' and next_attempt_at <= ${now}
        and (locked_until is null or locked_until < ${now})
      order by next_attempt_at limit ${input.limit}
      ${postgres ? sql`for update skip locked` : sql``})
    returning batch_id, custom_id, model, input, attempts, deadline_at, state`.compile(database.write);
}

/**
 * Gives back this worker's slots, then takes as many free ones (its own among them) as it has
 * requests leased, up to max_concurrency: a worker with nothing to send holds none. Within the
 * transaction the slots given back are free to this worker alone.
 */
function slotStatements(database: Database, input: SettleAndClaimInput): CompiledQuery[] {
  const { endpoint, now, workerId } = input;
  const postgres = database.dialect === 'postgres';
  const least = postgres ? sql`least` : sql`min`;
  return [
    sql`update realtime_slots set locked_by = null, locked_until = null
      where endpoint = ${endpoint} and locked_by = ${workerId}`.compile(database.write),
    sql`
      update realtime_slots set locked_by = ${workerId}, locked_until = ${now + input.slotLeaseMs}
      where endpoint = ${endpoint} and slot in (
        select slot from realtime_slots
        where endpoint = ${endpoint} and slot < ${input.maxConcurrency}
          and (locked_until is null or locked_until < ${now})
        order by slot
        limit ${least}(${input.maxConcurrency}, (
          select count(*) from realtime_requests
          where endpoint = ${endpoint} and locked_by = ${workerId} and state = 'queued'))
        ${postgres ? sql`for update skip locked` : sql``})
      returning slot`.compile(database.write),
  ];
}
