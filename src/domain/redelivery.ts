/**
 * When a finished cargo may be delivered afresh (`barge cargo redeliver`, the admin API): the one
 * rule the redelivery itself and a dashboard's "redeliver" button both follow.
 */

/** Why a redelivery is refused. */
export type RedeliveryRefusalCode =
  | 'cargo_not_found'
  | 'result_not_ready'
  | 'result_purged'
  | 'no_delivery_requested'
  | 'delivery_in_progress';

export interface RedeliveryRefusal {
  code: RedeliveryRefusalCode;
  message: string;
}

/** What the rule looks at: the cargo's result, the channels it asked for, its deliveries. */
export interface RedeliveryFacts {
  cargoId: string;
  hasResult: boolean;
  purged: boolean;
  channels: number;
  deliveryPending: boolean;
}

/**
 * Refused while the cargo has no result, once its result is purged, when it asked for no delivery
 * (a mailbox-only cargo), and while a delivery is in progress (pending, or waiting for a retry).
 */
export function redeliveryRefusal(facts: RedeliveryFacts): RedeliveryRefusal | null {
  const { cargoId } = facts;
  if (!facts.hasResult) return { code: 'result_not_ready', message: `cargo '${cargoId}' has no result yet` };
  if (facts.purged) return { code: 'result_purged', message: `the result of cargo '${cargoId}' has been purged` };
  if (facts.channels === 0)
    return { code: 'no_delivery_requested', message: `cargo '${cargoId}' asked for no delivery` };
  if (facts.deliveryPending) {
    return { code: 'delivery_in_progress', message: `cargo '${cargoId}' has a delivery in progress` };
  }
  return null;
}

export const cargoNotFound = (cargoId: string): RedeliveryRefusal => ({
  code: 'cargo_not_found',
  message: `no cargo '${cargoId}'`,
});
