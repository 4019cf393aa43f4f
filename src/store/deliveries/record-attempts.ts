/** Recording finished attempts: the attempt rows, the deliveries' new state and the cargo's status. */
import { sql } from 'kysely';
import { newId } from '../../domain/ids.js';
import { chunks, statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import type { DeliveryAttemptsTable } from '../schema.js';
import { retryNowWhereConnectionGone } from './connection-deleted.js';
import { settleCargoStatuses } from './settle-cargo.js';

export type AttemptRecord = Omit<DeliveryAttemptsTable, 'id' | 'delivery_id' | 'attempt'>;

export type AttemptVerdict = { kind: 'delivered' } | { kind: 'retry'; nextAttemptAt: number } | { kind: 'failed' };

export interface FinishedAttempt {
  deliveryId: string;
  workerId: string;
  attempt: AttemptRecord;
  verdict: AttemptVerdict;
  now: number;
}

/**
 * Records finished attempts and their consequences in one transaction (the scheduler groups the
 * attempts that finish together, so a busy worker pays one commit for many): each attempt row,
 * its delivery's new state, and the cargo's status once none of its deliveries is pending
 * (callback_failed if any failed, else callback_delivered). Only the lease holder may record: the
 * deliveries are read locked (FOR UPDATE on PostgreSQL; SQLite's transaction holds the write lock),
 * so an attempt whose lease was lost, or changed hands meanwhile, is dropped.
 */
export async function recordAttempts(database: Database, finished: FinishedAttempt[]): Promise<void> {
  if (finished.length === 0) return;
  // One time for the group (its latest record): rows that end alike are then updated together,
  // and the attempt ids made in one millisecond cost an increment, not new randomness.
  const now = Math.max(...finished.map((f) => f.now));
  await database.write.transaction().execute(async (tx) => {
    const current = new Map<
      string,
      { cargo_id: string; channel: string; attempts: number; locked_by: string | null; status: string }
    >();
    for (const part of chunks(finished.map((f) => f.deliveryId))) {
      const rows = await tx
        .selectFrom('deliveries')
        .select(['id', 'cargo_id', 'channel', 'attempts', 'locked_by', 'status'])
        .where('id', 'in', part)
        .$if(database.dialect === 'postgres', (qb) => qb.forUpdate())
        .execute();
      for (const row of rows) current.set(row.id, row);
    }
    const accepted: { f: FinishedAttempt; delivery: { cargo_id: string; channel: string; attempts: number } }[] = [];
    for (const f of finished) {
      const delivery = current.get(f.deliveryId);
      if (delivery && delivery.locked_by === f.workerId && delivery.status === 'pending')
        accepted.push({ f, delivery });
    }
    for (const part of statementChunks(
      accepted,
      11,
      ({ f }) => (f.attempt.error_detail?.length ?? 0) + (f.attempt.response_excerpt?.length ?? 0),
    )) {
      await tx
        .insertInto('delivery_attempts')
        .values(
          part.map(({ f, delivery }) => ({
            id: newId('att', now),
            delivery_id: f.deliveryId,
            attempt: delivery.attempts + 1,
            trigger: f.attempt.trigger,
            started_at: f.attempt.started_at,
            duration_ms: f.attempt.duration_ms,
            status_code: f.attempt.status_code,
            error_class: f.attempt.error_class,
            error_detail: f.attempt.error_detail,
            response_excerpt: f.attempt.response_excerpt,
          })),
        )
        .execute();
    }
    // Deliveries that end up alike (typically: delivered, same status code) are updated by one
    // statement.
    const alike = new Map<string, { f: FinishedAttempt; ids: string[] }>();
    for (const { f } of accepted) {
      const { verdict, attempt } = f;
      const key = JSON.stringify([
        f.workerId,
        verdict.kind,
        verdict.kind === 'retry' ? verdict.nextAttemptAt : null,
        verdict.kind === 'delivered' ? null : attempt.error_detail,
        attempt.status_code,
      ]);
      const group = alike.get(key);
      if (group) group.ids.push(f.deliveryId);
      else alike.set(key, { f, ids: [f.deliveryId] });
    }
    for (const { f, ids } of alike.values()) {
      const { verdict } = f;
      for (const part of chunks(ids)) {
        await tx
          .updateTable('deliveries')
          .set({
            attempts: sql<number>`attempts + 1`,
            status: verdict.kind === 'retry' ? 'pending' : verdict.kind,
            next_attempt_at: verdict.kind === 'retry' ? verdict.nextAttemptAt : now,
            last_error: verdict.kind === 'delivered' ? null : f.attempt.error_detail,
            last_status_code: f.attempt.status_code,
            locked_by: null,
            locked_until: null,
            updated_at: now,
            ended_at: verdict.kind === 'retry' ? null : now,
          })
          .where('id', 'in', part)
          .where('locked_by', '=', f.workerId)
          .where('status', '=', 'pending')
          .execute();
      }
    }
    // An attempt that was in flight while its connection was deleted: no retry can succeed.
    const connectionRetries = accepted
      .filter(({ f, delivery }) => f.verdict.kind === 'retry' && delivery.channel !== 'webhook')
      .map(({ f }) => f.deliveryId);
    if (connectionRetries.length > 0) await retryNowWhereConnectionGone(tx, database.dialect, connectionRetries, now);
    const ended = [
      ...new Set(accepted.filter(({ f }) => f.verdict.kind !== 'retry').map(({ delivery }) => delivery.cargo_id)),
    ];
    for (const part of chunks(ended)) await settleCargoStatuses(tx, database.dialect, part, now);
  });
}
