/** Claiming due deliveries: find them, lease them, load what an attempt needs, renew and release leases. */

import type { ExpressionBuilder } from 'kysely';
import { chunks } from '../chunks.js';
import type { Database } from '../database.js';
import { nextDueAt } from '../leases.js';
import { metadataOf } from '../metadata.js';
import type { DeliveryChannelName, Schema } from '../schema.js';
import type { DeliveryRow } from './create.js';

/** What an attempt needs of its delivery row. */
export type LeasedDeliveryRow = Pick<DeliveryRow, 'id' | 'cargo_id' | 'channel' | 'trigger' | 'attempts'>;

/** Everything an attempt needs: the delivery, its cargo's result and target, the project's secrets. */
export interface DueDelivery {
  delivery: LeasedDeliveryRow;
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
  database: Database,
  input: { now: number; limit: number; skipProjects?: readonly string[] },
): Promise<DeliveryCandidate[]> {
  const skip = input.skipProjects ?? [];
  const rows = await database.read
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
  database: Database,
  ids: readonly string[],
  workerId: string,
  now: number,
): Promise<DueDelivery[]> {
  const rows: Awaited<ReturnType<typeof heldQuery>> = [];
  for (const part of chunks([...ids])) rows.push(...(await heldQuery(database, part, workerId)));
  const order = new Map(ids.map((id, i) => [id, i]));
  rows.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  return rows.map((row) => {
    const secrets = row.webhook_secret === null ? [] : [row.webhook_secret];
    if (row.previous_webhook_secret && (row.previous_webhook_secret_until ?? 0) > now) {
      secrets.push(row.previous_webhook_secret);
    }
    return {
      delivery: {
        id: row.id,
        cargo_id: row.cargo_id,
        channel: row.channel,
        trigger: row.trigger,
        attempts: row.attempts,
      },
      cargoId: row.cargo_id,
      projectId: row.project_id,
      projectSlug: row.project_slug,
      notificationEmail: row.notification_email,
      callbackUrl: row.callback_url,
      callback: row.callback,
      metadata: row.metadata,
      success: row.success === 1,
      response: row.response,
      errorMessage: row.error_message,
      webhookSecrets: secrets,
    };
  });
}

/**
 * Keeps this worker's leases on deliveries it still works on (attempts in flight, deliveries
 * leased ahead) until `until`: a lease is short (BARGE_LEASE_MS) and renewed while held, so the
 * deliveries of a worker that dies are due again soon after, not after the longest attempt.
 */
export async function extendDeliveryLeases(
  database: Database,
  workerId: string,
  ids: readonly string[],
  until: number,
): Promise<void> {
  for (const part of chunks([...ids])) {
    await database.write
      .updateTable('deliveries')
      .set({ locked_until: until, next_attempt_at: until })
      .where('id', 'in', part)
      .where('locked_by', '=', workerId)
      .where('status', '=', 'pending')
      .execute();
  }
}

function heldQuery(database: Database, ids: string[], lockedBy: string) {
  return database.read
    .selectFrom('deliveries as d')
    .innerJoin('cargo as c', 'c.id', 'd.cargo_id')
    .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
    .leftJoin('compat_cargo as m', 'm.cargo_id', 'c.id')
    .innerJoin('results as r', 'r.cargo_id', 'c.id')
    .innerJoin('projects as p', 'p.id', 'c.project_id')
    .select([
      'd.id',
      'd.cargo_id',
      'd.channel',
      'd.trigger',
      'd.attempts',
      'c.project_id',
      'c.callback_url',
      'c.callback',
      metadataOf,
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

/** The earliest time a pending delivery is due and not leased (an attempt in flight holds its lease). */
export function nextDeliveryAt(database: Database): Promise<number | null> {
  return nextDueAt(database, 'deliveries', { status: 'pending' });
}

/** Gives up this worker's leases (all of them, or those of `ids`): the deliveries are due again at `now`. */
export async function releaseDeliveryLeases(
  database: Database,
  workerId: string,
  now: number,
  ids?: string[],
): Promise<void> {
  for (const part of ids ? chunks(ids) : [null]) {
    await database.write
      .updateTable('deliveries')
      .set({ locked_by: null, locked_until: null, next_attempt_at: now })
      .where('locked_by', '=', workerId)
      .$if(part !== null, (qb) => qb.where('id', 'in', part as string[]))
      .execute();
  }
}
