import type { DueDelivery } from '../store/deliveries.js';

/**
 * A delivery channel hands one cargo's result to one target. It never throws for an expected
 * failure: it returns an outcome the scheduler records and schedules from, in one place.
 */
export type DispatchOutcome =
  | { kind: 'delivered'; statusCode: number | null; responseExcerpt: string | null }
  | {
      kind: 'failed';
      /** A stable class for the attempt log and tracking, e.g. `http_status`, `timeout`, `dns`. */
      errorClass: string;
      detail: string;
      statusCode: number | null;
      responseExcerpt: string | null;
    };

/** Where a delivery goes: what the scheduler knows of a due delivery before it leases it. */
export type DeliveryTarget = Pick<DueDelivery, 'cargoId' | 'callbackUrl' | 'callback'>;

export interface DeliveryChannel {
  readonly name: 'webhook' | 'object_store';
  /**
   * Deliveries with the same key share a concurrency limit (a receiving host, a bucket). Called
   * for due deliveries before they are leased, so it sees only the target.
   */
  concurrencyKey(target: DeliveryTarget): string;
  deliver(due: DueDelivery): Promise<DispatchOutcome>;
}
