/**
 * A deleted connection's deliveries: they can never succeed, so its deletion ends them at once
 * instead of leaving them to wait out their retries. Deliveries name their connection only in
 * the cargo's `callback` JSON, read here with each dialect's JSON operator.
 */
import { type RawBuilder, sql, type Transaction } from 'kysely';
import { CONNECTION_NOT_FOUND, connectionNotFoundDetail } from '../../domain/connections.js';
import { newId } from '../../domain/ids.js';
import { chunks, statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import type { Schema } from '../schema.js';
import { settleCargoStatuses } from './settle-cargo.js';

/** The `connection_id` of the `callback` of the cargo aliased `c` (null for a webhook-only cargo). */
function callbackConnectionId(dialect: Database['dialect']): RawBuilder<string | null> {
  return dialect === 'postgres'
    ? sql<string | null>`(c.callback::json ->> 'connection_id')`
    : sql<string | null>`json_extract(c.callback, '$.connection_id')`;
}

/**
 * Fails the connection's pending deliveries, in the transaction that deletes it: each is recorded
 * as an attempt that found the connection gone would be (an attempt row of class
 * connection_not_found, the delivery failed with that text), and its cargo settles to
 * callback_failed unless another of its deliveries is still pending. A delivery leased by a
 * worker is left to it: its attempt in flight may already have written with the connection's
 * credentials, and its record says so; if that attempt is to be retried, recordAttempts makes the
 * retry due at once (retryNowWhereConnectionGone), and it fails as below. On PostgreSQL every
 * pending delivery of the connection is locked first, as recordAttempts locks the ones it
 * records, so the two never miss each other: whichever commits second sees the other's work.
 */
export async function failDeletedConnectionDeliveries(
  tx: Transaction<Schema>,
  dialect: Database['dialect'],
  connection: { id: string; projectId: string },
  now: number,
): Promise<void> {
  const pending = await tx
    .selectFrom('deliveries as d')
    .innerJoin('cargo as c', 'c.id', 'd.cargo_id')
    .select(['d.id', 'd.cargo_id', 'd.attempts', 'd.trigger', 'd.locked_until'])
    .where('c.project_id', '=', connection.projectId)
    .where('d.status', '=', 'pending')
    .where('d.channel', '<>', 'webhook')
    .where(callbackConnectionId(dialect), '=', connection.id)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate(['d']))
    .execute();
  const free = pending.filter((d) => d.locked_until === null || d.locked_until < now);
  if (free.length === 0) return;
  const detail = connectionNotFoundDetail(connection.id);
  for (const part of statementChunks(free, 10)) {
    await tx
      .insertInto('delivery_attempts')
      .values(
        part.map((d) => ({
          id: newId('att', now),
          delivery_id: d.id,
          attempt: d.attempts + 1,
          trigger: d.trigger,
          started_at: now,
          duration_ms: 0,
          status_code: null,
          error_class: CONNECTION_NOT_FOUND,
          error_detail: detail,
          response_excerpt: null,
        })),
      )
      .execute();
  }
  for (const part of chunks(free.map((d) => d.id))) {
    await tx
      .updateTable('deliveries')
      .set({
        attempts: sql<number>`attempts + 1`,
        status: 'failed',
        next_attempt_at: now,
        last_error: detail,
        last_status_code: null,
        locked_by: null,
        locked_until: null,
        updated_at: now,
        ended_at: now,
      })
      .where('id', 'in', part)
      .where('status', '=', 'pending')
      .execute();
  }
  for (const part of chunks([...new Set(free.map((d) => d.cargo_id))])) {
    await settleCargoStatuses(tx, dialect, part, now);
  }
}

/**
 * Of these deliveries just scheduled for a retry, makes those whose connection is gone due at
 * once: the retry fails them with connection_not_found straight away instead of after its delay.
 * For the attempts that were in flight while their connection was deleted.
 */
export async function retryNowWhereConnectionGone(
  tx: Transaction<Schema>,
  dialect: Database['dialect'],
  deliveryIds: string[],
  now: number,
): Promise<void> {
  for (const part of chunks(deliveryIds)) {
    await tx
      .updateTable('deliveries')
      .set({ next_attempt_at: now })
      .where('id', 'in', part)
      .where('status', '=', 'pending')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('cargo as c')
              .innerJoin('connections as k', (join) =>
                join.onRef('k.project_id', '=', 'c.project_id').on('k.id', '=', callbackConnectionId(dialect)),
              )
              .select('k.id')
              .whereRef('c.id', '=', 'deliveries.cargo_id'),
          ),
        ),
      )
      .execute();
  }
}
