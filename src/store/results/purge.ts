/** Purging results past their retention (the result's body and the request go, the cargo row stays). */
import type { ExpressionBuilder } from 'kysely';
import { chunks } from '../chunks.js';
import type { Database } from '../database.js';
import type { Schema } from '../schema.js';

/**
 * Retention waits for deliveries in progress: a one-hour result whose webhook is still on its
 * 1 h 42 min retry schedule keeps its body until the last attempt.
 */
const noPendingDelivery = (eb: ExpressionBuilder<Schema, 'results'>) =>
  eb.not(
    eb.exists(
      eb
        .selectFrom('deliveries')
        .select('deliveries.id')
        .whereRef('deliveries.cargo_id', '=', 'results.cargo_id')
        .where('deliveries.status', '=', 'pending'),
    ),
  );

/**
 * Removes the bodies of results past their retention, a bounded chunk at a time (no table-wide
 * lock). The cargo row and its status stay, so the mailbox can answer 410 with the last status;
 * the request (the prompt) goes with the result.
 */
export async function purgeExpiredResults(database: Database, now: number, limit: number): Promise<number> {
  return database.write.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('results')
      .select('cargo_id')
      .where('purged_at', 'is', null)
      .where('expires_at', '<=', now)
      .where(noPendingDelivery)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    if (due.length === 0) return 0;
    const ids = due.map((d) => d.cargo_id);
    for (const part of chunks(ids)) {
      await tx
        .updateTable('results')
        .set({ response: null, error_message: null, purged_at: now })
        .where('cargo_id', 'in', part)
        .execute();
      await tx
        .updateTable('cargo_requests')
        .set({ request: '{"requests":[]}' })
        .where('cargo_id', 'in', part)
        .execute();
    }
    return ids.length;
  });
}

/** When the next result body falls due for purging. */
export async function nextResultExpiry(database: Database): Promise<number | null> {
  const row = await database.read
    .selectFrom('results')
    .select((eb) => eb.fn.min('expires_at').as('at'))
    .where('purged_at', 'is', null)
    .where(noPendingDelivery)
    .executeTakeFirst();
  return row?.at == null ? null : Number(row.at);
}
