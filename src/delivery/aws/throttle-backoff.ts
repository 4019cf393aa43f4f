/**
 * Storage throttling (S3 `SlowDown`, HTTP 503; STS `Throttling`) is the service's to absorb: it is
 * retried here, inside one delivery attempt, with capped exponential backoff and full jitter, and
 * never spends one of the customer-visible retries. Anything else is returned to the caller.
 */
export interface BackoffSettings {
  /** Cap of the first delay; each retry doubles it, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  retries: number;
  /** Gives up rather than sleep past this (epoch ms, wall clock). */
  deadline: number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  now: () => number;
}

export type Throttled<T> = T | { throttled: true; tries: number; detail: string };

/**
 * Runs `call` until it returns something that is not throttling, or the retries or the time run
 * out. `isThrottle` looks at a returned value (calls report failures as values).
 */
export async function withThrottleBackoff<T>(
  call: () => Promise<T>,
  isThrottle: (value: T) => string | null,
  settings: BackoffSettings,
): Promise<Throttled<T>> {
  for (let attempt = 0; ; attempt++) {
    const value = await call();
    const throttle = isThrottle(value);
    if (throttle === null) return value;
    const cap = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** attempt);
    const delay = Math.round(settings.random() * cap);
    if (attempt >= settings.retries || settings.now() + delay > settings.deadline) {
      return { throttled: true, tries: attempt + 1, detail: throttle };
    }
    await settings.sleep(delay);
  }
}

export function isThrottledResult<T>(value: Throttled<T>): value is { throttled: true; tries: number; detail: string } {
  return typeof value === 'object' && value !== null && 'throttled' in value;
}
