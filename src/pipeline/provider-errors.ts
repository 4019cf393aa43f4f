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

export type ProviderFailureVerdict =
  | { action: 'retry'; at: number; error: string; refused: boolean }
  | { action: 'fail'; error: string };

/**
 * `tries`: the batch row's `attempts` (every earlier failed try, which sets the backoff) and
 * `refusals` (the earlier ones the provider refused, which decide when to give up).
 */
export function judgeProviderFailure(
  err: unknown,
  tries: { attempts: number; refusals: number },
  now: number,
): ProviderFailureVerdict {
  const error = err instanceof Error ? err.message : String(err);
  const backoff = now + retryBackoffMs(tries.attempts);
  if (!(err instanceof ProviderError)) return { action: 'retry', at: backoff, error, refused: false };
  switch (err.kind) {
    case 'rate_limited':
      return {
        action: 'retry',
        at: err.retryAfterMs === null ? backoff : now + err.retryAfterMs,
        error,
        refused: false,
      };
    case 'retryable':
      return { action: 'retry', at: backoff, error, refused: false };
    case 'rejected':
    case 'auth':
      return tries.refusals + 1 >= REFUSALS_BEFORE_FAILING
        ? {
            action: 'fail',
            error: `${err.kind === 'auth' ? 'the provider refused the credentials' : 'the provider refused the batch'}: ${error}`,
          }
        : { action: 'retry', at: backoff, error, refused: true };
  }
}
