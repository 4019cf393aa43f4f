/**
 * Requests of a batch run against a real-time endpoint (decisions.md, "Batches over a real-time
 * endpoint"): each one a row that the endpoint runner claims under a lease, sends, and settles.
 * The states, and the store port the `openai-compatible` provider and its runner work through
 * (implemented in src/store/realtime/; the provider never writes SQL).
 *
 * - `queued`: waiting to be sent, or in flight under a lease (`locked_until` in the future);
 * - `answered`: the endpoint's message is stored; `failed`: the endpoint refused it (a 4xx other
 *   than 408 and 429); `expired`: still unanswered 24 h after submit; `canceled`: the batch was
 *   canceled before it was sent.
 */
import type { BatchRequest } from './batch-requests.js';

export const REALTIME_REQUEST_STATES = Object.freeze(['queued', 'answered', 'failed', 'expired', 'canceled'] as const);
export type RealtimeRequestState = (typeof REALTIME_REQUEST_STATES)[number];

/** A request claimed for sending. */
export interface ClaimedRequest {
  batchId: string;
  customId: string;
  /** The provider's model id (without the endpoint). */
  model: string;
  /** JSON text of the model input. */
  input: string;
  /** Tries so far, this one included. */
  attempts: number;
  deadlineAt: number;
  /** The lease: the request must be sent, answered and settled before then. */
  leasedUntil: number;
}

/** How a sent request ended: an answer, a refusal, a try to repeat later, or out of time. */
export type Settlement = { batchId: string; customId: string } & (
  | { kind: 'answered'; response: string }
  | { kind: 'failed'; error: string }
  | { kind: 'expired'; error: string }
  | { kind: 'retry'; at: number; error: string }
  /** Leased but never sent (the worker stops): given back as it was. */
  | { kind: 'release' }
);

/** A settled request as the batch's results read it. */
export interface SettledRequest {
  customId: string;
  state: Exclude<RealtimeRequestState, 'queued'>;
  /** JSON text of the model message when answered. */
  response: string | null;
  error: string | null;
}

/** A submitted batch's requests for the endpoint runner (RealtimeQueue.enqueue). */
export interface EnqueueInput {
  batchId: string;
  endpoint: string;
  model: string;
  requests: AsyncIterable<BatchRequest>;
  now: number;
  deadlineAt: number;
}

/** What the endpoint runner's one write takes (RealtimeQueue.settleAndClaim). */
export interface SettleAndClaimInput {
  workerId: string;
  now: number;
  settlements: readonly Settlement[];
  endpoint: string;
  maxConcurrency: number;
  limit: number;
  requestLeaseMs: number;
  slotLeaseMs: number;
  /** The first write of a runner makes the endpoint's slot rows (there may be more since the catalog changed). */
  ensureSlots: boolean;
}

export interface RealtimeQueue {
  /** Stores a batch's requests (again after a crash: the ones already stored are kept). */
  enqueue(input: EnqueueInput): Promise<void>;
  /**
   * One transaction: stores how requests ended (each only under this worker's lease, so each
   * request is answered once); leases up to `limit` due requests of the endpoint (one past its
   * deadline becomes `expired` instead); then holds as many of the endpoint's `maxConcurrency`
   * slots as this worker has requests leased, releasing the rest. Resolves to the requests leased
   * and the slots held (each until `now + slotLeaseMs`).
   */
  settleAndClaim(input: SettleAndClaimInput): Promise<{ claimed: ClaimedRequest[]; slots: number }>;
  /** When the endpoint next has a request to send (a due try, or a lease that lapses); null: none queued. */
  nextDueAt(endpoint: string): Promise<number | null>;
  /** Requests of the batch still queued, and the earliest due time among them (in flight: due). */
  progress(batchId: string): Promise<{ queued: number; nextAt: number | null }>;
  /** The batch's settled requests. */
  results(batchId: string): AsyncIterable<SettledRequest>;
  /** The batch's requests not in flight are canceled. */
  cancel(batchId: string, now: number): Promise<void>;
  /** Removes the batch's requests (its results are collected). */
  remove(batchId: string): Promise<void>;
}

/** What a request still unanswered at its deadline fails with. */
export const REALTIME_EXPIRED_ERROR =
  'expired: the endpoint did not answer the request within 24 hours of its submission';
