/** Creating deliveries: the channels a cargo asked for, and the pending rows a stored result starts. */
import type { Insertable, Selectable, Transaction } from 'kysely';
import { newId } from '../../domain/ids.js';
import { storedCallbackType } from '../../domain/message-targets.js';
import { statementChunks } from '../chunks.js';
import type { DeliveriesTable, DeliveryChannelName, Schema } from '../schema.js';

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
  tx: Transaction<Schema>,
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
