/** Redelivery: a fresh delivery of a finished cargo on every channel it asked for, or why it is refused. */
import { movableFrom } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import { resultsStoredNotice } from '../notify.js';
import type { DeliveryChannelName } from '../schema.js';
import { insertDeliveries, requestedChannels } from './create.js';

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
    // Scheduled by the CLI, another process: the workers' deliveries wake at the commit.
    for (const notice of resultsStoredNotice(database)) await tx.executeQuery(notice);
    return { channels };
  });
}
