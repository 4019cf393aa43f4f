/** Provider metrics: every adapter's calls timed and its failures counted, by one decorator. */
import type { Metrics } from '../ports.js';
import type { Provider } from '../providers/provider.js';

/** Every call of the Provider interface, as the `call` label names it (README, "Metrics"). */
export const PROVIDER_CALLS = ['submit', 'find_submitted', 'status', 'results', 'cancel', 'cleanup', 'check'] as const;
type ProviderCall = (typeof PROVIDER_CALLS)[number];

/**
 * A provider with every call timed and every failure counted (`barge_provider_call_seconds`,
 * `barge_provider_errors_total`, labelled by provider and call): one decorator for every adapter,
 * so no adapter carries metrics code. A results stream is timed from the call to its last item.
 * Both exist at 0 for every call from the start.
 */
export function withProviderMetrics(provider: Provider, metrics: Metrics): Provider {
  const labels = (call: ProviderCall) => ({ provider: provider.name, call });
  for (const call of PROVIDER_CALLS) {
    metrics.zero('counter', 'barge_provider_errors_total', labels(call));
    metrics.zero('histogram', 'barge_provider_call_seconds', labels(call));
  }
  const timed = async <T>(call: ProviderCall, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await run();
    } catch (err) {
      metrics.count('barge_provider_errors_total', labels(call));
      throw err;
    } finally {
      metrics.observe('barge_provider_call_seconds', (performance.now() - started) / 1000, labels(call));
    }
  };
  return {
    name: provider.name,
    limits: provider.limits,
    submit: (input) => timed('submit', () => provider.submit(input)),
    findSubmitted: (lookup, signal) => timed('find_submitted', () => provider.findSubmitted(lookup, signal)),
    status: (job, signal) => timed('status', () => provider.status(job, signal)),
    cancel: (job, signal) => timed('cancel', () => provider.cancel(job, signal)),
    cleanup: (job, signal) => timed('cleanup', () => provider.cleanup(job, signal)),
    // A check never throws (its failures are capabilities); it is timed like any other call.
    check: () => timed('check', () => provider.check()),
    async *results(job, signal) {
      const started = performance.now();
      try {
        yield* provider.results(job, signal);
      } catch (err) {
        metrics.count('barge_provider_errors_total', labels('results'));
        throw err;
      } finally {
        metrics.observe('barge_provider_call_seconds', (performance.now() - started) / 1000, labels('results'));
      }
    },
  };
}
