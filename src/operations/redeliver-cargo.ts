/**
 * Schedules a fresh delivery of a finished cargo on every channel it asked for (its webhook, its
 * bucket or message target). Refused while the cargo has no result, once the result is purged,
 * when it asked for no delivery (a mailbox-only cargo), and while a delivery is in progress.
 */

import { createRedelivery } from '../store/deliveries/redeliver.js';
import type { DeliveryChannelName } from '../store/schema.js';
import { type OperationDeps, type Result, refuse, succeed } from './operation.js';

export interface ScheduledRedelivery {
  cargoId: string;
  channels: DeliveryChannelName[];
  /** The cargo's status from now on. */
  status: 'callback_pending';
}

export async function redeliverCargo(
  deps: OperationDeps,
  input: { cargoId: string },
): Promise<Result<ScheduledRedelivery>> {
  const outcome = await createRedelivery(deps.database, input.cargoId, deps.clock.now());
  if ('refused' in outcome) return refuse({ code: outcome.refused, message: outcome.message });
  return succeed({ cargoId: input.cargoId, channels: outcome.channels, status: 'callback_pending' });
}
