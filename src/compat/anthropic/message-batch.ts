/**
 * barge's side of Anthropic's Message Batches, barge → Anthropic: the MessageBatch object of a
 * batch and the lines of its results file (decisions.md, "Provider-compatible batch endpoints";
 * providers.md §1.4–1.6). Pure: the routes read the rows and send what these build.
 */
import { FALLBACK_ERROR_TYPE, type RequestOutcome } from '../request-outcome.js';

/** A batch's requests by where they are, summing to its request count. */
export interface RequestCounts {
  processing: number;
  succeeded: number;
  errored: number;
  canceled: number;
  expired: number;
}

/** What the MessageBatch object is made of (times in epoch ms). */
export interface BatchFacts {
  id: string;
  createdAt: number;
  /** When its last request ended; null while any is processing. */
  endedAt: number | null;
  cancelRequestedAt: number | null;
  counts: RequestCounts;
}

/** Anthropic's batches expire 24 hours after their creation. */
export const EXPIRY_MS = 24 * 60 * 60 * 1000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The MessageBatch: `in_progress`, `canceling` once a cancel was asked, `ended` when no request is
 * processing any more; `results_url` only then, at `resultsBase` (the public base URL).
 */
export function messageBatchOf(batch: BatchFacts, resultsBase: string) {
  const ended = batch.endedAt !== null;
  const status: 'in_progress' | 'canceling' | 'ended' = ended
    ? 'ended'
    : batch.cancelRequestedAt !== null
      ? 'canceling'
      : 'in_progress';
  return {
    id: batch.id,
    type: 'message_batch' as const,
    processing_status: status,
    request_counts: batch.counts,
    ended_at: iso(batch.endedAt),
    created_at: iso(batch.createdAt) as string,
    expires_at: iso(batch.createdAt + EXPIRY_MS) as string,
    cancel_initiated_at: iso(batch.cancelRequestedAt),
    archived_at: null,
    results_url: ended ? `${resultsBase}/v1/messages/batches/${encodeURIComponent(batch.id)}/results` : null,
  };
}

export type MessageBatch = ReturnType<typeof messageBatchOf>;

/**
 * One line of the results file (without its newline): `succeeded` carries the cargo's message as
 * stored (its JSON text, byte for byte), `errored` the provider's error type (else `api_error`).
 * A request still processing has no line: the file is served once the batch ended.
 */
export function resultLineOf(customId: string, outcome: Exclude<RequestOutcome, { type: 'processing' }>): string {
  const id = JSON.stringify(customId);
  switch (outcome.type) {
    case 'succeeded':
      return `{"custom_id":${id},"result":{"type":"succeeded","message":${outcome.messageJson}}}`;
    case 'errored':
      return JSON.stringify({
        custom_id: customId,
        result: {
          type: 'errored',
          error: { type: 'error', error: { type: outcome.errorType || FALLBACK_ERROR_TYPE, message: outcome.message } },
        },
      });
    case 'canceled':
    case 'expired':
      return `{"custom_id":${id},"result":{"type":"${outcome.type}"}}`;
  }
}
