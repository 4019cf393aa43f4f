/**
 * Glossary
 * - project: the unit of tenant isolation; owns API keys, cargo and (later) connections.
 * - cargo: one submitted model request (or one `records` list) and, later, its result.
 * - batch: a group of cargo of one (provider, model) sent to a provider as one job.
 * - job: the provider's own batch object, known by the provider job id.
 * - mailbox: the stored result a client polls with GET /cargo/{id}/result.
 * - delivery / attempt: a requested hand-over of a result (webhook, object) and each try at it.
 * - lease: a time-limited claim (`locked_by`, `locked_until`) a worker holds on a row it works on.
 */

export const CARGO_STATUSES = Object.freeze({
  pending: 'pending',
  batched: 'batched',
  processing: 'processing',
  completed: 'completed',
  failed: 'failed',
  callback_pending: 'callback_pending',
  callback_delivered: 'callback_delivered',
  callback_failed: 'callback_failed',
} as const);

export type CargoStatus = (typeof CARGO_STATUSES)[keyof typeof CARGO_STATUSES];

export const ALL_CARGO_STATUSES = Object.values(CARGO_STATUSES) as CargoStatus[];

const DESCRIPTIONS: Record<CargoStatus, string> = {
  pending: 'Waiting to be assigned to a batch',
  batched: 'Assigned to a batch, waiting for submission',
  processing: 'Batch is being processed by the provider',
  completed: 'Processing completed',
  failed: 'Processing failed',
  callback_pending: 'Result ready, delivering callback',
  callback_delivered: 'Callback delivered',
  callback_failed: 'Callback delivery failed after all retries',
};

export function statusDescription(status: CargoStatus): string {
  return DESCRIPTIONS[status];
}

/** Statuses before a result exists: GET /result answers 409 for these. */
const UNFINISHED: ReadonlySet<CargoStatus> = new Set(['pending', 'batched', 'processing']);

export function hasResult(status: CargoStatus): boolean {
  return !UNFINISHED.has(status);
}

/** Where a cargo goes when its result is stored: delivering it, if it asked for a delivery. */
export function statusAfterResult(success: boolean, deliveries: number): CargoStatus {
  if (deliveries > 0) return 'callback_pending';
  return success ? 'completed' : 'failed';
}
