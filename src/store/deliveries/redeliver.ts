/** Redelivery: fresh deliveries of finished cargo on every channel each asked for, or why one is refused. */
import type { Transaction } from 'kysely';
import { movableFrom } from '../../domain/lifecycle.js';
import { cargoNotFound, type RedeliveryRefusal, redeliveryRefusal } from '../../domain/redelivery.js';
import { chunks } from '../chunks.js';
import type { Database } from '../database.js';
import { resultsStoredNotice } from '../notify.js';
import type { DeliveryChannelName, Schema } from '../schema.js';
import { insertDeliveries, requestedChannels } from './create.js';

/** A cargo to deliver afresh: what it asked for. */
export interface RedeliveredCargo {
  id: string;
  callback_url: string | null;
  callback: string | null;
}

/**
 * Schedules a fresh delivery on every channel the cargo asked for (admin redeliver), of any
 * project, or of `projectId`'s only (another project's cargo is not found). Refused as
 * domain/redelivery.ts says.
 */
export async function createRedelivery(
  database: Database,
  cargoId: string,
  now: number,
  projectId?: string,
): Promise<{ channels: DeliveryChannelName[] } | { refused: RedeliveryRefusal }> {
  return database.write.transaction().execute(async (tx) => {
    // Locked on PostgreSQL, so a settle of the same cargo waits for this one (settleCargoStatuses).
    const cargo = await tx
      .selectFrom('cargo as c')
      .leftJoin('results as r', 'r.cargo_id', 'c.id')
      .select(['c.id', 'c.callback_url', 'c.callback', 'r.cargo_id as result_id', 'r.purged_at'])
      .where('c.id', '=', cargoId)
      .$if(projectId !== undefined, (qb) => qb.where('c.project_id', '=', projectId as string))
      .$if(database.dialect === 'postgres', (qb) => qb.forUpdate(['c']))
      .executeTakeFirst();
    if (!cargo) return { refused: cargoNotFound(cargoId) };
    const pending = await tx
      .selectFrom('deliveries')
      .select('id')
      .where('cargo_id', '=', cargoId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    const refusal = redeliveryRefusal({
      cargoId,
      hasResult: cargo.result_id !== null,
      purged: cargo.purged_at !== null,
      channels: requestedChannels(cargo.callback_url, cargo.callback).length,
      deliveryPending: pending !== undefined,
    });
    if (refusal) return { refused: refusal };
    const [channels = []] = await scheduleRedeliveries(tx, [cargo], 'redeliver', now);
    // Scheduled by the CLI, another process: the workers' deliveries wake at the commit.
    for (const notice of resultsStoredNotice(database)) await tx.executeQuery(notice);
    return { channels };
  });
}

/**
 * Inside a transaction that holds these cargo (checked by the caller): a pending delivery on every
 * channel each asked for, and each moved to callback_pending. The channels of each, in order.
 */
export async function scheduleRedeliveries(
  tx: Transaction<Schema>,
  cargo: readonly RedeliveredCargo[],
  trigger: 'redeliver' | 'recovery',
  now: number,
): Promise<DeliveryChannelName[][]> {
  const channels = cargo.map((c) => requestedChannels(c.callback_url, c.callback));
  await insertDeliveries(
    tx,
    cargo.flatMap((c, i) => (channels[i] ?? []).map((channel) => ({ cargoId: c.id, channel, trigger }))),
    now,
  );
  for (const ids of chunks(cargo.map((c) => c.id))) {
    await tx
      .updateTable('cargo')
      .set({ status: 'callback_pending', updated_at: now })
      .where('id', 'in', ids)
      .where('status', 'in', movableFrom('redeliver'))
      .execute();
  }
  return channels;
}
