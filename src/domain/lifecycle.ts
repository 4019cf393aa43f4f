/**
 * The lifecycle: every status of every moving thing (cargo, batch, delivery, connection, outbox
 * message) and the table of allowed cargo moves. Migrations hold frozen copies of these lists.
 *
 * Glossary
 * - project: the unit of tenant isolation; owns API keys, cargo and (later) connections.
 * - cargo: one submitted model request (or one `records` list) and, later, its result.
 * - batch: a group of cargo of one (provider, model) sent to a provider as one job.
 * - job: the provider's own batch object, known by the provider job id.
 * - mailbox: the stored result a client polls with GET /cargo/{id}/result.
 * - delivery / attempt: a requested hand-over of a result (webhook, object) and each try at it.
 * - lease: a time-limited claim (`locked_by`, `locked_until`) a worker holds on a row it works on.
 */
import { CONNECTION_NOT_FOUND } from './connections.js';

export const CARGO_STATUSES = Object.freeze({
  pending: 'pending',
  batched: 'batched',
  processing: 'processing',
  completed: 'completed',
  failed: 'failed',
  callback_pending: 'callback_pending',
  callback_delivered: 'callback_delivered',
  callback_failed: 'callback_failed',
  canceled: 'canceled',
} as const);

export type CargoStatus = (typeof CARGO_STATUSES)[keyof typeof CARGO_STATUSES];

export const ALL_CARGO_STATUSES = Object.values(CARGO_STATUSES) as CargoStatus[];

/** A batch: formed and being submitted, with the provider, or ended (results collected). */
export const BATCH_STATUSES = Object.freeze({
  submitting: 'submitting',
  processing: 'processing',
  ended: 'ended',
} as const);
export type BatchStatus = (typeof BATCH_STATUSES)[keyof typeof BATCH_STATUSES];

/** A delivery: waiting for an attempt (or a retry), or ended one way or the other. */
export const DELIVERY_STATUSES = Object.freeze({
  pending: 'pending',
  delivered: 'delivered',
  failed: 'failed',
} as const);
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[keyof typeof DELIVERY_STATUSES];

/** Where a delivery goes: `callback_url`, or the `callback` target's type. */
export const CHANNELS = Object.freeze({
  webhook: 'webhook',
  object_store: 'object_store',
  sqs: 'sqs',
  sns: 'sns',
  eventbridge: 'eventbridge',
} as const);
export type ChannelName = (typeof CHANNELS)[keyof typeof CHANNELS];
export const ALL_CHANNELS = Object.values(CHANNELS) as ChannelName[];

/** A connection: usable, or marked failed by an access denial until a success ends the incident. */
export const CONNECTION_STATUSES = Object.freeze({ active: 'active', failed: 'failed' } as const);
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[keyof typeof CONNECTION_STATUSES];

/** An outbox message: waiting to be sent (or retried), sent, or given up. */
export const OUTBOX_STATUSES = Object.freeze({ pending: 'pending', sent: 'sent', failed: 'failed' } as const);
export type OutboxStatus = (typeof OUTBOX_STATUSES)[keyof typeof OUTBOX_STATUSES];

/**
 * A bulk recovery (redelivering a project's cargo of a time window): working through its set, done
 * with it, or stopped by an operator.
 */
export const RECOVERY_STATUSES = Object.freeze({
  running: 'running',
  completed: 'completed',
  canceled: 'canceled',
} as const);
export type RecoveryStatus = (typeof RECOVERY_STATUSES)[keyof typeof RECOVERY_STATUSES];

/**
 * A provider-compatible batch (an Anthropic Message Batch or an OpenAI batch): being created
 * (invisible: its requests staged, then its cargo published), open while a request is
 * unfinished, failed (OpenAI lines refused: no cargo) or ended (counts final, files made).
 */
export const COMPAT_BATCH_STATES = Object.freeze({
  creating: 'creating',
  open: 'open',
  failed: 'failed',
  ended: 'ended',
} as const);
export type CompatBatchState = (typeof COMPAT_BATCH_STATES)[keyof typeof COMPAT_BATCH_STATES];

/** Which API a provider-compatible batch speaks. */
export const COMPAT_APIS = Object.freeze({ anthropic: 'anthropic', openai: 'openai' } as const);
export type CompatApiName = (typeof COMPAT_APIS)[keyof typeof COMPAT_APIS];

/** An OpenAI file: being written (invisible; also a file being deleted) or ready. */
export const COMPAT_FILE_STATES = Object.freeze({ writing: 'writing', ready: 'ready' } as const);
export type CompatFileState = (typeof COMPAT_FILE_STATES)[keyof typeof COMPAT_FILE_STATES];

/** An OpenAI file's purpose: an upload (`batch`) or a batch's output or error file. */
export const COMPAT_FILE_PURPOSES = Object.freeze({ batch: 'batch', batch_output: 'batch_output' } as const);
export type CompatFilePurpose = (typeof COMPAT_FILE_PURPOSES)[keyof typeof COMPAT_FILE_PURPOSES];

/** The cargo a bulk recovery redelivers: those whose delivery failed, or (to send them again) was delivered. */
export const RECOVERABLE_CARGO_STATUSES = Object.freeze(['callback_failed', 'callback_delivered'] as const);
export type RecoverableCargoStatus = (typeof RECOVERABLE_CARGO_STATUSES)[number];

/**
 * Every way a cargo's status may change, and from where: the one table store writes check
 * (`where status in (move.from)`), so a write that lost a race changes nothing.
 */
export const CARGO_MOVES = Object.freeze({
  /** The batcher puts it in a batch. */
  batch: { from: ['pending'], to: ['batched'] },
  /**
   * A batch that waited (its provider turned a create away) is refilled before it tries again:
   * its cargo go back to pending and are taken again round robin with what arrived meanwhile.
   */
  refill: { from: ['batched'], to: ['pending'] },
  /** The provider accepted the batch. */
  submit: { from: ['batched'], to: ['processing'] },
  /** Its result is stored (a batch that failed as a whole stores results too). */
  result: { from: ['batched', 'processing'], to: ['completed', 'failed', 'callback_pending'] },
  /** Its deliveries have all ended. */
  settle: { from: ['callback_pending'], to: ['callback_delivered', 'callback_failed'] },
  /**
   * Its project takes it back before any of it reaches a provider: while pending, or batched in a
   * batch whose submission has not begun (store/cargo/cancel.ts).
   */
  cancel: { from: ['pending', 'batched'], to: ['canceled'] },
  /** An operator asks for its deliveries again. */
  redeliver: {
    from: ['completed', 'failed', 'callback_delivered', 'callback_failed'],
    to: ['callback_pending'],
  },
} as const satisfies Record<string, { from: readonly CargoStatus[]; to: readonly CargoStatus[] }>);

export type CargoMove = keyof typeof CARGO_MOVES;

/** The statuses a move starts from, for `where status in (...)`. */
export function movableFrom(move: CargoMove): CargoStatus[] {
  return [...CARGO_MOVES[move].from];
}

/** Whether some move takes a cargo from `from` to `to`. */
export function canMove(from: CargoStatus, to: CargoStatus): boolean {
  return Object.values(CARGO_MOVES).some(
    (move) => (move.from as readonly CargoStatus[]).includes(from) && (move.to as readonly CargoStatus[]).includes(to),
  );
}

/** The mailbox's `error_message` for a canceled cargo (decisions.md, "Client operations"). */
export const CARGO_CANCELED_ERROR = 'canceled';

const DESCRIPTIONS: Record<CargoStatus, string> = {
  pending: 'Waiting to be assigned to a batch',
  batched: 'Assigned to a batch, waiting for submission',
  processing: 'Batch is being processed by the provider',
  completed: 'Processing completed',
  failed: 'Processing failed',
  callback_pending: 'Result ready, delivering callback',
  callback_delivered: 'Callback delivered',
  callback_failed: 'Callback delivery failed after all retries',
  canceled: 'Canceled before processing',
};

export function statusDescription(status: CargoStatus): string {
  return DESCRIPTIONS[status];
}

/** A delivery as tracking sees it, oldest first; `errorClass` is its last attempt's. */
export interface TrackedDelivery {
  channel: ChannelName;
  status: DeliveryStatus;
  attempts: number;
  errorClass: string | null;
  lastError: string | null;
}

/**
 * What tracking says of a cargo: its status's description, and why, where barge knows a reason an
 * operator or a client can act on: the error a failed cargo ended with (a provider that refused
 * the batch, a job that failed), why the last try to submit its batch failed while it waits, or
 * how the delivery that made it callback_failed ended.
 */
export function trackingDescription(
  status: CargoStatus,
  why: { resultError: string | null; submitError: string | null; deliveries: readonly TrackedDelivery[] },
): string {
  if (status === 'failed' && why.resultError) return `${DESCRIPTIONS.failed}: ${why.resultError}`;
  if (status === 'batched' && why.submitError) {
    return `${DESCRIPTIONS.batched}; the last try failed and will be retried: ${why.submitError}`;
  }
  if (status === 'callback_failed') {
    // A channel's latest delivery decides it, as it decided the status (a redelivery supersedes).
    const latest = new Map(why.deliveries.map((d) => [d.channel, d]));
    const failed = [...latest.values()].filter((d) => d.status === 'failed');
    if (failed.length === 1) return deliveryFailure(failed[0] as TrackedDelivery);
    if (failed.length > 1) return failed.map((d) => `${d.channel}: ${deliveryFailure(d)}`).join('; ');
  }
  return DESCRIPTIONS[status];
}

/** How a delivery failed for good: refused at once, its connection deleted, or its retries used up. */
function deliveryFailure(d: TrackedDelivery): string {
  if (d.errorClass === CONNECTION_NOT_FOUND) return 'Delivery failed: the connection was deleted';
  if (d.errorClass === 'blocked_address') {
    return `Delivery refused: the callback address is not allowed (${d.lastError})`;
  }
  if (d.errorClass === 'invalid_url') return `Delivery refused: ${d.lastError}`;
  return `Delivery failed after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}: ${d.lastError}`;
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
