/**
 * The delivery retry schedule (interface document 6.1): attempt 1 at once, then retries after
 * 30 s, 2 min, 10 min, 30 min and 1 h, each counted from the previous attempt's start, so the
 * final retry comes 1 h 42 min 30 s after the first attempt. The delays are data
 * (BARGE_WEBHOOK_RETRY_DELAYS_MS) so tests can shorten them.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  30_000, 120_000, 600_000, 1_800_000, 3_600_000,
]);

/**
 * When the next attempt is due after `attemptsMade` attempts (the last one started at
 * `lastStartedAt`) all failed; null when the schedule is used up.
 */
export function nextAttemptAt(attemptsMade: number, lastStartedAt: number, delays: readonly number[]): number | null {
  const delay = delays[attemptsMade - 1];
  return delay === undefined ? null : lastStartedAt + delay;
}

export function parseRetryDelays(raw: string): number[] | null {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) return null;
  return parts.map(Number);
}
