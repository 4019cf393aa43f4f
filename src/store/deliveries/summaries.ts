/** The per-channel delivery summary that tracking shows. */
import type { Database } from '../database.js';
import type { DeliveryChannelName, DeliveryStatus } from '../schema.js';

export interface DeliverySummary {
  channel: DeliveryChannelName;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  /** The error class of its last attempt, if that failed. */
  errorClass: string | null;
  lastStatusCode: number | null;
  nextAttemptAt: number | null;
}

/** The cheap per-channel summary tracking shows. */
export async function deliverySummaries(database: Database, cargoId: string): Promise<DeliverySummary[]> {
  const rows = await database.read
    .selectFrom('deliveries')
    .select(['channel', 'status', 'attempts', 'last_error', 'last_status_code', 'next_attempt_at'])
    .select((eb) =>
      eb
        .selectFrom('delivery_attempts as a')
        .select('a.error_class')
        .whereRef('a.delivery_id', '=', 'deliveries.id')
        .orderBy('a.attempt', 'desc')
        .limit(1)
        .as('error_class'),
    )
    .where('cargo_id', '=', cargoId)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({
    channel: r.channel,
    status: r.status,
    attempts: r.attempts,
    lastError: r.last_error,
    errorClass: r.error_class,
    lastStatusCode: r.last_status_code,
    nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
  }));
}
