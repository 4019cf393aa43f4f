/** The delivery channel interface: what a channel is given, and the outcome values it returns instead of throwing. */
import type { MailMessage } from '../mail/mailer.js';
import type { DueDelivery } from '../store/deliveries/claim.js';
import type { DeliveryChannelName } from '../store/schema.js';

/**
 * What an attempt changes about the connection it went through: a success ends an incident, an
 * access denial starts one (with the one mail to send, if the project has an address). The
 * scheduler applies it in one transaction with the incident mail's outbox row; channels never
 * write to the store themselves.
 */
export type ConnectionEffect =
  | { connectionId: string; to: 'active' }
  | { connectionId: string; to: 'failed'; reason: string; mail: MailMessage | null };

/**
 * A delivery channel hands one cargo's result to one target. It never throws for an expected
 * failure: it returns an outcome the scheduler records and schedules from, in one place.
 */
export type DispatchOutcome =
  | { kind: 'delivered'; statusCode: number | null; responseExcerpt: string | null; effect?: ConnectionEffect }
  | {
      kind: 'failed';
      /** A stable class for the attempt log and tracking, e.g. `http_status`, `timeout`, `dns`. */
      errorClass: string;
      detail: string;
      statusCode: number | null;
      responseExcerpt: string | null;
      /** False when no retry can succeed (the connection was deleted): the delivery fails at once. */
      retryable: boolean;
      effect?: ConnectionEffect;
    };

/** Where a delivery goes: what the scheduler knows of a due delivery before it leases it. */
export type DeliveryTarget = Pick<DueDelivery, 'cargoId' | 'callbackUrl' | 'callback'>;

export interface DeliveryChannel {
  readonly name: DeliveryChannelName;
  /**
   * Deliveries with the same key share a concurrency limit (a receiving host's address, a bucket).
   * Called for due deliveries before they are leased, so it sees only the target.
   */
  concurrencyKey(target: DeliveryTarget): string | Promise<string>;
  deliver(due: DueDelivery): Promise<DispatchOutcome>;
}

/** A failed outcome with no response (most channels' failures). */
export function failed(
  errorClass: string,
  detail: string,
  options: { statusCode?: number | null; retryable?: boolean; effect?: ConnectionEffect } = {},
): DispatchOutcome {
  return {
    kind: 'failed',
    errorClass,
    detail,
    statusCode: options.statusCode ?? null,
    responseExcerpt: null,
    retryable: options.retryable ?? true,
    ...(options.effect ? { effect: options.effect } : {}),
  };
}
