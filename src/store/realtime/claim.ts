/**
 * Claiming an endpoint's due requests for sending, bounded by its max_concurrency across every
 * worker: one transaction holds the endpoint's row (FOR UPDATE on PostgreSQL; SQLite's write lock
 * is the whole database's), counts the live leases, and leases at most the difference. Two
 * workers' claims of one endpoint take turns, so together they never pass the bound.
 */
import { sql } from 'kysely';
import { type ClaimedRequest, REALTIME_EXPIRED_ERROR } from '../../domain/realtime-requests.js';
import type { Database } from '../database.js';

export interface ClaimInput {
  endpoint: string;
  maxConcurrency: number;
  /** This worker's own bound on what it takes at once. */
  limit: number;
  workerId: string;
  now: number;
  leaseMs: number;
}

interface CandidateRow {
  batch_id: string;
  custom_id: string;
  deadline_at: number | string;
}

export async function claimRealtimeRequests(
  database: Database,
  input: ClaimInput,
): Promise<{ claimed: ClaimedRequest[]; inFlight: number }> {
  const { endpoint, now } = input;
  const postgres = database.dialect === 'postgres';
  return database.write.transaction().execute(async (tx) => {
    await tx
      .insertInto('realtime_endpoints')
      .values({ name: endpoint })
      .onConflict((oc) => oc.doNothing())
      .execute();
    if (postgres) await sql`select name from realtime_endpoints where name = ${endpoint} for update`.execute(tx);
    const counted = await sql<{ n: number | string }>`
      select count(*) as n from realtime_requests
      where endpoint = ${endpoint} and locked_until is not null and locked_until >= ${now}`.execute(tx);
    const inFlight = Number(counted.rows[0]?.n ?? 0);
    const room = Math.min(input.limit, input.maxConcurrency - inFlight);
    if (room <= 0) return { claimed: [], inFlight };
    // Oldest due first; a lapsed lease (a worker that died mid-request) makes its row due again.
    const { rows } = await sql<CandidateRow>`
      select batch_id, custom_id, deadline_at from realtime_requests
      where endpoint = ${endpoint} and state = 'queued' and next_attempt_at <= ${now}
        and (locked_until is null or locked_until < ${now})
      order by next_attempt_at limit ${room} ${postgres ? sql`for update skip locked` : sql``}`.execute(tx);
    const late = rows.filter((r) => Number(r.deadline_at) <= now);
    const due = rows.filter((r) => Number(r.deadline_at) > now);
    if (late.length > 0) {
      await sql`
        update realtime_requests set state = 'expired', error = ${REALTIME_EXPIRED_ERROR},
          locked_by = null, locked_until = null, updated_at = ${now}
        where ${keysIn(late)}`.execute(tx);
    }
    if (due.length === 0) return { claimed: [], inFlight };
    const leased = await sql<{
      batch_id: string;
      custom_id: string;
      model: string;
      input: string;
      attempts: number | string;
      deadline_at: number | string;
    }>`
      update realtime_requests set locked_by = ${input.workerId}, locked_until = ${now + input.leaseMs},
        attempts = attempts + 1, updated_at = ${now}
      where ${keysIn(due)}
      returning batch_id, custom_id, model, input, attempts, deadline_at`.execute(tx);
    return {
      inFlight,
      claimed: leased.rows.map((r) => ({
        batchId: r.batch_id,
        customId: r.custom_id,
        model: r.model,
        input: r.input,
        attempts: Number(r.attempts),
        deadlineAt: Number(r.deadline_at),
      })),
    };
  });
}

/** `(batch_id, custom_id) in (values ...)` for the given rows (SQLite takes a row-value list only as a subquery). */
export function keysIn(rows: readonly { batch_id: string; custom_id: string }[]) {
  return sql`(batch_id, custom_id) in (values ${sql.join(rows.map((r) => sql`(${r.batch_id}, ${r.custom_id})`))})`;
}
