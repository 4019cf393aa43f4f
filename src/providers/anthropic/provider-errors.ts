/** Turns what the Anthropic SDK throws into the ProviderError kinds the pipeline acts on. */
import { AnthropicError, APIError } from '@anthropic-ai/sdk';
import { errorKindOfStatus, ProviderError, retryAfterMsOf, withoutKey } from '../provider.js';

export interface ErrorContext {
  now: number;
  /** The job was created moments ago: a 404 is the API not showing it yet (provider.ts justCreated). */
  jobJustCreated: boolean;
  /** Removed from any message (withoutKey). */
  apiKey: string;
}

/**
 * An HTTP error keeps its status's kind (429 rate_limited with the `retry-after` wait, 529 and
 * other 5xx retryable, 401/403 auth, other 4xx rejected) and the provider's `<type>: <message>`.
 * A connection failure or timeout (no status) is retryable. An SDK error without a response (no
 * `results_url` on an archived batch) is rejected; anything else thrown while a call or a results
 * stream was under way (a reset socket, a line cut short) is retryable.
 */
export function providerErrorOf(err: unknown, context: ErrorContext): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof APIError) {
    const status = err.status as number | undefined;
    return new ProviderError(
      errorKindOfStatus(status, context.jobJustCreated),
      withoutKey(describe(err, status), context.apiKey),
      retryAfterMsOf(err.headers as Headers | undefined, context.now),
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError(
    err instanceof AnthropicError ? 'rejected' : 'retryable',
    withoutKey(message, context.apiKey),
  );
}

function describe(err: APIError, status: number | undefined): string {
  if (err.type && err.apiMessage) return `${err.type}: ${err.apiMessage}`;
  if (status === undefined) {
    const cause = (err as { cause?: unknown }).cause;
    const detail = cause instanceof Error && cause.message ? ` (${cause.message})` : '';
    return `connection_error: ${err.message}${detail}`;
  }
  return `http_${status}: ${err.message}`;
}
