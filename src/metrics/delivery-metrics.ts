/** Delivery attempt metrics: named in one place, and every channel's series there from the start. */
import type { Metrics } from '../ports.js';

export interface AttemptMetrics {
  /** One finished attempt: its outcome (`delivered` or the error class), its verdict, its duration. */
  attempted(channel: string, outcome: string, verdict: string, seconds: number): void;
}

/**
 * `barge_delivery_attempts_total` (channel, outcome, verdict) and `barge_delivery_attempt_seconds`
 * (channel). Error classes are open-ended, so only the delivered series of each channel is made
 * at 0 at the start; a failure's series appears with its first attempt.
 */
export function attemptMetrics(metrics: Metrics, channels: Iterable<string>): AttemptMetrics {
  for (const channel of channels) {
    metrics.zero('counter', 'barge_delivery_attempts_total', { channel, outcome: 'delivered', verdict: 'delivered' });
    metrics.zero('histogram', 'barge_delivery_attempt_seconds', { channel });
  }
  return {
    attempted(channel, outcome, verdict, seconds) {
      metrics.count('barge_delivery_attempts_total', { channel, outcome, verdict });
      metrics.observe('barge_delivery_attempt_seconds', seconds, { channel });
    },
  };
}
