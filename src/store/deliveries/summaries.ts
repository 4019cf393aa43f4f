/** The per-channel delivery summary that tracking shows. */
import type { Database } from '../database.js';
import type { DeliveryChannelName, DeliveryStatus } from '../schema.js';

export interface DeliverySummary {
  channel: DeliveryChannelName;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  lastStatusCode: number | null;
  nextAttemptAt: number | null;
}

/** The cheap per-channel summary tracking shows. */
export async function deliverySummaries(database: Database, cargoId: string): Promise<DeliverySummary[]> {
  const rows = await database.read
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
