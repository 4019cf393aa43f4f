/**
 * The one policy for a failed provider call: retry it later, or give the batch up with the
 * provider's text. Adapters say what kind of failure it was (ProviderError); only here is that
 * turned into a wait or a verdict.
 */
import { retryBackoffMs } from '../domain/polling.js';
import { ProviderError } from '../providers/provider.js';

/**
 * A refusal (`rejected`, `auth`) is tried this many times before the batch is failed: a key being
 * rotated or a provider's passing misjudgement gets a second chance, a bad request does not wait
 * forever. Transient failures (`retryable`, `rate_limited`) are retried until the batch's
 * completion window closes.
 */
export const REFUSALS_BEFORE_FAILING = 3;

export type ProviderFailureVerdict = { action: 'retry'; at: number; error: string } | { action: 'fail'; error: string };

/** `attempts`: how many earlier tries of this batch failed (the batch row's `attempts`). */
export function judgeProviderFailure(err: unknown, attempts: number, now: number): ProviderFailureVerdict {
  const error = err instanceof Error ? err.message : String(err);
  if (!(err instanceof ProviderError)) return { action: 'retry', at: now + retryBackoffMs(attempts), error };
  switch (err.kind) {
    case 'rate_limited':
      return { action: 'retry', at: now + (err.retryAfterMs ?? retryBackoffMs(attempts)), error };
    case 'retryable':
      return { action: 'retry', at: now + retryBackoffMs(attempts), error };
    case 'rejected':
    case 'auth':
      return attempts + 1 >= REFUSALS_BEFORE_FAILING
        ? {
            action: 'fail',
            error: `${err.kind === 'auth' ? 'the provider refused the credentials' : 'the provider refused the batch'}: ${error}`,
          }
        : { action: 'retry', at: now + retryBackoffMs(attempts), error };
  }
}
