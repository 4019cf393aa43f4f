/**
 * When to look at a running provider job again. A job that says when it will end is checked right
 * then (results are fetched within moments of the end); otherwise checks start frequent and back
 * off as the job runs longer, at a tenth of its age, so a 10-minute job is checked every minute and
 * a slow 10-hour one every 5 minutes. Never past the completion deadline.
 */
export const POLL_MIN_MS = 1_000;
export const POLL_MAX_MS = 300_000;

export function nextPollAt(input: {
  now: number;
  submittedAt: number;
  expectedEndAt: number | null;
  deadlineAt: number;
}): number {
  const { now, submittedAt, expectedEndAt, deadlineAt } = input;
  let at: number;
  if (expectedEndAt !== null && expectedEndAt > now) {
    at = expectedEndAt;
  } else {
    const age = Math.max(0, now - submittedAt);
    at = now + Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, Math.floor(age / 10)));
  }
  return Math.min(at, Math.max(deadlineAt, now));
}

/** Retries of a failed submit or poll: 1 s, 2 s, 4 s … capped at 5 minutes. */
export function retryBackoffMs(attempts: number): number {
  return Math.min(POLL_MAX_MS, 1000 * 2 ** Math.min(attempts, 20));
}
