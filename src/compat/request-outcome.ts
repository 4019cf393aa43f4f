/**
 * What became of one request of a provider-compatible batch, read from its cargo: still
 * processing, succeeded with the cargo's message, errored with the provider's error type, canceled
 * or expired. Both APIs' views (Anthropic's result lines and counts, OpenAI's output and error
 * files) are built from this.
 */
import { CARGO_CANCELED_ERROR, type CargoStatus, hasResult } from '../domain/lifecycle.js';

export type RequestOutcome =
  | { type: 'processing' }
  | { type: 'succeeded'; messageJson: string }
  | { type: 'errored'; errorType: string; message: string }
  | { type: 'canceled'; message: string }
  | { type: 'expired'; message: string };

/** A cargo of the batch with its stored result (null fields while it has none). */
export interface CargoResult {
  status: CargoStatus;
  success: number | null;
  response: string | null;
  errorMessage: string | null;
}

/** The error type a request failed with when none of the provider's can be told (Anthropic's catch-all). */
export const FALLBACK_ERROR_TYPE = 'api_error';

/**
 * The stored texts begin with what ended the request (store/results, domain/records.ts):
 * `canceled` alone for a cargo its project canceled, `canceled: …` / `expired: …` for a request a
 * provider (or barge, at the end of the completion window) never ran, and `<error type>: <its
 * message>` for a provider's error, where the type is the provider's (`invalid_request_error`).
 */
const PROVIDER_ERROR = /^([a-z][a-z0-9_]*_error): ([\s\S]*)$/;

export function outcomeOf(cargo: CargoResult): RequestOutcome {
  if (!hasResult(cargo.status) || cargo.success === null) return { type: 'processing' };
  if (cargo.success === 1) {
    if (cargo.response !== null) return { type: 'succeeded', messageJson: cargo.response };
    return {
      type: 'errored',
      errorType: FALLBACK_ERROR_TYPE,
      message: 'the result is past its retention and was purged',
    };
  }
  const text = cargo.errorMessage ?? 'the result is past its retention and was purged';
  if (text === CARGO_CANCELED_ERROR || text.startsWith('canceled:')) return { type: 'canceled', message: text };
  if (text.startsWith('expired:')) return { type: 'expired', message: text };
  const typed = PROVIDER_ERROR.exec(text);
  if (typed) return { type: 'errored', errorType: typed[1] as string, message: typed[2] as string };
  return { type: 'errored', errorType: FALLBACK_ERROR_TYPE, message: text };
}
