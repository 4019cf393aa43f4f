/** Provider metrics: every adapter's calls timed and its failures counted, by one decorator. */
import type { Metrics } from '../ports.js';
import type { Provider } from '../providers/provider.js';

/**
 * A provider with every call timed and every failure counted (`barge_provider_call_seconds`,
 * `barge_provider_errors_total`, labelled by provider and call): one decorator for every adapter,
 * so no adapter carries metrics code. A results stream is timed from the call to its last item.
 */
export function withProviderMetrics(provider: Provider, metrics: Metrics): Provider {
  const labels = (call: string) => ({ provider: provider.name, call });
  const timed = async <T>(call: string, run: () => Promise<T>): Promise<T> => {
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
