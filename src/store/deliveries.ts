import { type ExpressionBuilder, type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { newId } from '../domain/ids.js';
import { type CargoStatus, movableFrom } from '../domain/lifecycle.js';
import { storedCallbackType } from '../domain/message-targets.js';
import { chunks, statementChunks } from './chunks.js';
import type { Database } from './database.js';
import { nextDueAt } from './leases.js';
import type { DeliveriesTable, DeliveryAttemptsTable, DeliveryChannelName, DeliveryStatus, Schema } from './schema.js';

export type DeliveryRow = Selectable<DeliveriesTable>;

export interface DeliveryRequest {
  cargoId: string;
  channel: DeliveryChannelName;
  trigger: string;
}

/** The deliveries a cargo asked for: a webhook for `callback_url`, and the `callback` target's own channel. */
export function requestedChannels(callbackUrl: string | null, callback: string | null): DeliveryChannelName[] {
  const channels: DeliveryChannelName[] = [];
  if (callbackUrl !== null) channels.push('webhook');
  if (callback !== null) channels.push((storedCallbackType(callback) ?? 'object_store') as DeliveryChannelName);
  return channels;
}

/** Creates pending deliveries, due at once; part of the transaction that stores the result. */
export async function insertDeliveries(
  tx: Transaction<Schema> | Kysely<Schema>,
  requests: DeliveryRequest[],
  now: number,
): Promise<void> {
  for (const part of statementChunks(requests, 13)) {
    await tx.insertInto('deliveries').values(newDeliveryRows(part, now)).execute();
  }
}

/** The rows insertDeliveries writes (results.ts also writes them through the SQLite write worker). */
function newDeliveryRows(requests: DeliveryRequest[], now: number): Insertable<DeliveriesTable>[] {
  return requests.map((r) => ({
    id: newId('dlv', now),
    cargo_id: r.cargoId,
    channel: r.channel,
    status: 'pending' as const,
    next_attempt_at: now,
    locked_by: null,
    locked_until: null,
    last_error: null,
    last_status_code: null,
    trigger: r.trigger,
    created_at: now,
    updated_at: now,
    ended_at: null,
  }));
}

/** Everything an attempt needs: the delivery, its cargo's result and target, the project's secrets. */
export interface DueDelivery {
  delivery: DeliveryRow;
  cargoId: string;
  projectId: string;
  projectSlug: string;
  /** Where the project's incident mail goes, if anywhere. */
  notificationEmail: string | null;
  callbackUrl: string | null;
  /** JSON of the `callback` target (object store, SQS, SNS, EventBridge). */
  callback: string | null;
  metadata: string | null;
  success: boolean;
  response: string | null;
  errorMessage: string | null;
  webhookSecrets: string[];
}

/** A due delivery before it is leased: enough to tell which receiver or bucket it goes to, and whose it is. */
export interface DeliveryCandidate {
  id: string;
  cargoId: string;
  projectId: string;
  channel: DeliveryChannelName;
  callbackUrl: string | null;
  callback: string | null;
}

/**
 * Up to `limit` due, unleased pending deliveries, oldest first, read without a lock or a
 * transaction: the scheduler chooses from them, then leases (leaseDeliveries). `skipProjects`
 * looks past projects whose deliveries cannot start now, so another project's come into view.
 */
export async function findDueDeliveries(
  db: Kysely<Schema>,
  input: { now: number; limit: number; skipProjects?: readonly string[] },
): Promise<DeliveryCandidate[]> {
  const skip = input.skipProjects ?? [];
  const rows = await db
    .selectFrom('deliveries as d')
    .innerJoin('cargo as c', 'c.id', 'd.cargo_id')
    .select(['d.id', 'd.cargo_id', 'c.project_id', 'd.channel', 'c.callback_url', 'c.callback'])
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', input.now)
    .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<', input.now)]))
    .$if(skip.length > 0, (qb) => qb.where('c.project_id', 'not in', [...skip]))
    .orderBy('d.next_attempt_at')
    .limit(input.limit)
    .execute();
  return rows.map((d) => ({
    id: d.id,
    cargoId: d.cargo_id,
    projectId: d.project_id,
    channel: d.channel,
    callbackUrl: d.callback_url,
    callback: d.callback,
  }));
}

export interface LeaseInput {
  workerId: string;
  now: number;
  leaseMs: number;
  /** To lease, if still due. */
  lease: readonly string[];
  /** To push back to `until`, if still due (unleased), so the deliveries behind them come into view. */
  defer: readonly { id: string; until: number }[];
}

/** Still pending and not leased by anyone (a lapsed lease counts as none). */
const stillDue = (now: number) => (eb: ExpressionBuilder<Schema, 'deliveries'>) =>
  eb.and([eb('status', '=', 'pending'), eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)])]);

/**
 * Pushes the deferred deliveries back and leases the chosen ones, each only if still due; returns
 * the ids this worker won. The lease is a conditional update, so of two workers that chose the
 * same row exactly one gets it, on either database, and the loser simply leases fewer. Deferred
 * rows are updated one statement per due time, not one per row. A lease also moves the
 * delivery's due time to the lease's end, when it is due again if its holder dies: the due-time
 * index then leads claims past the deliveries held now instead of through them.
 */
export async function leaseDeliveries(database: Database, input: LeaseInput): Promise<string[]> {
  if (input.lease.length === 0 && input.defer.length === 0) return [];
  const until = input.now + input.leaseMs;
  return database.write.transaction().execute(async (tx) => {
    const byTime = new Map<number, string[]>();
    for (const { id, until: at } of input.defer) {
      const ids = byTime.get(at);
      if (ids) ids.push(id);
      else byTime.set(at, [id]);
    }
    for (const [at, ids] of byTime) {
      for (const part of chunks(ids)) {
        await tx
          .updateTable('deliveries')
          .set({ next_attempt_at: at })
          .where('id', 'in', part)
          .where(stillDue(input.now))
          .execute();
      }
    }
    const won: string[] = [];
    for (const part of chunks([...input.lease])) {
      const rows = await tx
        .updateTable('deliveries')
        .set({ locked_by: input.workerId, locked_until: until, next_attempt_at: until })
        .where('id', 'in', part)
        .where(stillDue(input.now))
        .returning('id')
        .execute();
      for (const row of rows) won.push(row.id);
    }
    return won;
  });
}

/**
 * Everything the attempts of deliveries this worker leased need, in the order of `ids`; the
 * webhook secret rotation's grace period is applied at `now`.
 */
export async function loadLeasedDeliveries(
  db: Kysely<Schema>,
  ids: readonly string[],
  workerId: string,
  now: number,
): Promise<DueDelivery[]> {
  const rows: Awaited<ReturnType<typeof heldQuery>> = [];
  for (const part of chunks([...ids])) rows.push(...(await heldQuery(db, part, workerId)));
  const order = new Map(ids.map((id, i) => [id, i]));
  rows.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  return rows.map((row) => {
    const {
      project_id,
      project_slug,
      notification_email,
      callback_url,
      callback,
      metadata,
      success,
      response,
      error_message,
      webhook_secret,
      previous_webhook_secret,
      previous_webhook_secret_until,
      ...delivery
    } = row;
    const secrets = [webhook_secret];
    if (previous_webhook_secret && (previous_webhook_secret_until ?? 0) > now) secrets.push(previous_webhook_secret);
    return {
      delivery,
      cargoId: delivery.cargo_id,
      projectId: project_id,
      projectSlug: project_slug,
      notificationEmail: notification_email,
      callbackUrl: callback_url,
      callback,
      metadata,
      success: success === 1,
      response,
      errorMessage: error_message,
      webhookSecrets: secrets.filter((s): s is string => s !== null),
    };
  });
}

/**
 * Keeps this worker's leases on deliveries it still works on (attempts in flight, deliveries
 * leased ahead) until `until`: a lease is short (BARGE_LEASE_MS) and renewed while held, so the
 * deliveries of a worker that dies are due again soon after, not after the longest attempt.
 */
export async function extendDeliveryLeases(
  db: Kysely<Schema>,
  workerId: string,
  ids: readonly string[],
  until: number,
): Promise<void> {
  for (const part of chunks([...ids])) {
    await db
      .updateTable('deliveries')
      .set({ locked_until: until, next_attempt_at: until })
      .where('id', 'in', part)
      .where('locked_by', '=', workerId)
      .where('status', '=', 'pending')
      .execute();
  }
}

function heldQuery(db: Kysely<Schema>, ids: string[], lockedBy: string) {
  return db
    .selectFrom('deliveries as d')
    .innerJoin('cargo as c', 'c.id', 'd.cargo_id')
    .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
    .innerJoin('results as r', 'r.cargo_id', 'c.id')
    .innerJoin('projects as p', 'p.id', 'c.project_id')
    .selectAll('d')
    .select([
      'c.project_id',
      'c.callback_url',
      'c.callback',
      'q.metadata',
      'r.success',
      'r.response',
      'r.error_message',
      'p.slug as project_slug',
      'p.notification_email',
      'p.webhook_secret',
      'p.previous_webhook_secret',
      'p.previous_webhook_secret_until',
    ])
    .where('d.id', 'in', ids)
    .where('d.locked_by', '=', lockedBy)
    .execute();
}

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
    const accepted = finished.flatMap((f) => {
      const delivery = current.get(f.deliveryId);
      return delivery && delivery.locked_by === f.workerId && delivery.status === 'pending' ? [{ ...f, delivery }] : [];
    });
    for (const part of statementChunks(
      accepted,
      11,
      (f) => (f.attempt.error_detail?.length ?? 0) + (f.attempt.response_excerpt?.length ?? 0),
    )) {
      await tx
        .insertInto('delivery_attempts')
        .values(
          part.map((f) => ({
            id: newId('att', now),
            delivery_id: f.deliveryId,
            attempt: f.delivery.attempts + 1,
            ...f.attempt,
          })),
        )
        .execute();
    }
    // Deliveries that end up alike (typically: delivered, same status code) are updated by one
    // statement.
    const alike = new Map<string, { f: (typeof accepted)[number]; ids: string[] }>();
    for (const f of accepted) {
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
    const ended = [...new Set(accepted.filter((f) => f.verdict.kind !== 'retry').map((f) => f.delivery.cargo_id))];
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

/** The earliest time a pending delivery is due and not leased (an attempt in flight holds its lease). */
export function nextDeliveryAt(database: Database): Promise<number | null> {
  return nextDueAt(database, 'deliveries', { status: 'pending' });
}

/** Gives up this worker's leases (all of them, or those of `ids`): the deliveries are due again at `now`. */
export async function releaseDeliveryLeases(
  db: Kysely<Schema>,
  workerId: string,
  now: number,
  ids?: string[],
): Promise<void> {
  for (const part of ids ? chunks(ids) : [null]) {
    await db
      .updateTable('deliveries')
      .set({ locked_by: null, locked_until: null, next_attempt_at: now })
      .where('locked_by', '=', workerId)
      .$if(part !== null, (qb) => qb.where('id', 'in', part as string[]))
      .execute();
  }
}

export interface DeliverySummary {
  channel: DeliveryChannelName;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  lastStatusCode: number | null;
  nextAttemptAt: number | null;
}

/** The cheap per-channel summary tracking shows. */
export async function deliverySummaries(db: Kysely<Schema>, cargoId: string): Promise<DeliverySummary[]> {
  const rows = await db
    .selectFrom('deliveries')
    .select(['channel', 'status', 'attempts', 'last_error', 'last_status_code', 'next_attempt_at'])
    .where('cargo_id', '=', cargoId)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({
    channel: r.channel,
    status: r.status,
    attempts: r.attempts,
    lastError: r.last_error,
    lastStatusCode: r.last_status_code,
    nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
  }));
}

/** Why a redelivery is refused. */
export type RedeliveryRefusal =
  | 'cargo_not_found'
  | 'result_not_ready'
  | 'result_purged'
  | 'no_delivery_requested'
  | 'delivery_in_progress';

/**
 * Schedules a fresh delivery on every channel the cargo asked for (admin redeliver). Refused while
 * the cargo has no result, once the result is purged, or when it asked for no delivery.
 */
export async function createRedelivery(
  database: Database,
  cargoId: string,
  now: number,
): Promise<{ channels: DeliveryChannelName[] } | { refused: RedeliveryRefusal; message: string }> {
  return database.write.transaction().execute(async (tx) => {
    // Locked on PostgreSQL, so a settle of the same cargo waits for this one (settleCargoStatuses).
    const cargo = await tx
      .selectFrom('cargo as c')
      .leftJoin('results as r', 'r.cargo_id', 'c.id')
      .select(['c.id', 'c.callback_url', 'c.callback', 'r.cargo_id as result_id', 'r.purged_at'])
      .where('c.id', '=', cargoId)
      .$if(database.dialect === 'postgres', (qb) => qb.forUpdate(['c']))
      .executeTakeFirst();
    if (!cargo) return { refused: 'cargo_not_found', message: `no cargo '${cargoId}'` };
    if (!cargo.result_id) return { refused: 'result_not_ready', message: `cargo '${cargoId}' has no result yet` };
    if (cargo.purged_at !== null) {
      return { refused: 'result_purged', message: `the result of cargo '${cargoId}' has been purged` };
    }
    const channels = requestedChannels(cargo.callback_url, cargo.callback);
    if (channels.length === 0) {
      return { refused: 'no_delivery_requested', message: `cargo '${cargoId}' asked for no delivery` };
    }
    const pending = await tx
      .selectFrom('deliveries')
      .select('id')
      .where('cargo_id', '=', cargoId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (pending) return { refused: 'delivery_in_progress', message: `cargo '${cargoId}' has a delivery in progress` };
    await insertDeliveries(
      tx,
      channels.map((channel) => ({ cargoId, channel, trigger: 'redeliver' })),
      now,
    );
    await tx
      .updateTable('cargo')
      .set({ status: 'callback_pending', updated_at: now })
      .where('id', '=', cargoId)
      .where('status', 'in', movableFrom('redeliver'))
      .execute();
    return { channels };
  });
}
