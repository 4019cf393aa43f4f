/** Settling a cargo once its deliveries have all ended: callback_delivered or callback_failed. */
import { sql, type Transaction } from 'kysely';
import { type CargoStatus, movableFrom } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import type { Schema } from '../schema.js';

/**
 * Moves each of these cargo whose deliveries have all ended to callback_failed (the latest
 * delivery of some channel failed; a successful redelivery supersedes a failed one) or
 * callback_delivered. On PostgreSQL the cargo rows are locked first, so the statement that checks
 * "nothing pending" runs with a snapshot taken after any redelivery that held them committed
 * (createRedelivery locks the row the same way): a redelivery is never overwritten.
 */
export async function settleCargoStatuses(
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
