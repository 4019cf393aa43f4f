/** Recording finished attempts: the attempt rows, the deliveries' new state and the cargo's status. */
import { sql, type Transaction } from 'kysely';
import { newId } from '../../domain/ids.js';
import { type CargoStatus, movableFrom } from '../../domain/lifecycle.js';
import { chunks, statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import type { DeliveryAttemptsTable, Schema } from '../schema.js';

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
    const current = new Map<string, { cargo_id: string; attempts: number; locked_by: string | null; status: string }>();
    for (const part of chunks(finished.map((f) => f.deliveryId))) {
      const rows = await tx
        .selectFrom('deliveries')
        .select(['id', 'cargo_id', 'attempts', 'locked_by', 'status'])
        .where('id', 'in', part)
        .$if(database.dialect === 'postgres', (qb) => qb.forUpdate())
        .execute();
      for (const row of rows) current.set(row.id, row);
    }
    const accepted: { f: FinishedAttempt; delivery: { cargo_id: string; attempts: number } }[] = [];
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
    const ended = [
      ...new Set(accepted.filter(({ f }) => f.verdict.kind !== 'retry').map(({ delivery }) => delivery.cargo_id)),
    ];
    for (const part of chunks(ended)) await settleCargoStatuses(tx, database.dialect, part, now);
  });
}

/**
 * Moves each of these cargo whose deliveries have all ended to callback_failed (the latest
 * delivery of some channel failed; a successful redelivery supersedes a failed one) or
 * callback_delivered. On PostgreSQL the cargo rows are locked first, so the statement that checks
 * "nothing pending" runs with a snapshot taken after any redelivery that held them committed
 * (createRedelivery locks the row the same way): a redelivery is never overwritten.
 */
async function settleCargoStatuses(
  tx: Transaction<Schema>,
  dialect: Database['dialect'],
  cargoIds: string[],
  now: number,
): Promise<void> {
  if (dialect === 'postgres') {
    await tx.selectFrom('cargo').select('id').where('id', 'in', cargoIds).forUpdate().execute();
  }
  await tx
    .updateTable('cargo')
    .set({
      updated_at: now,
      status: sql<CargoStatus>`case when exists (
        select 1 from deliveries d where d.cargo_id = cargo.id and d.status = 'failed' and not exists (
          select 1 from deliveries n where n.cargo_id = d.cargo_id and n.channel = d.channel
            and (n.created_at > d.created_at or (n.created_at = d.created_at and n.id > d.id))))
        then 'callback_failed' else 'callback_delivered' end`,
    })
    .where('id', 'in', cargoIds)
    .where('status', 'in', movableFrom('settle'))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('deliveries as p')
            .select('p.id')
            .whereRef('p.cargo_id', '=', 'cargo.id')
            .where('p.status', '=', 'pending'),
        ),
      ),
    )
    .execute();
}
