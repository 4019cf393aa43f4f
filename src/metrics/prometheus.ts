/**
 * The Metrics port on prom-client: a counter or histogram per name, made on first use (or when
 * zeroed) with the label names of that use (a name keeps its labels). Durations (`*_seconds`) get prom-client's
 * default buckets, sizes powers of four. The registry also carries Node's own metrics (event-loop
 * lag, memory, GC) and the gauges the service registers (queue depths read from the store).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Metrics } from '../ports.js';

export interface PrometheusMetrics extends Metrics {
  readonly registry: Registry;
  /** A gauge whose value is read at scrape time (its collect may query the store). */
  gauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    collect: () => Promise<{ labels?: Record<string, string>; value: number }[]>,
  ): void;
}

const SIZE_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384];

export function prometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'barge_' });
  const counters = new Map<string, Counter>();
  const histograms = new Map<string, Histogram>();
  const help = (name: string) => name.replace(/^barge_/, '').replaceAll('_', ' ');
  const counter = (name: string, labels: Record<string, string>) => {
    let made = counters.get(name);
    if (!made) {
      made = new Counter({ name, help: help(name), labelNames: Object.keys(labels), registers: [registry] });
      counters.set(name, made);
    }
    return made;
  };
  const histogram = (name: string, labels: Record<string, string>) => {
    let made = histograms.get(name);
    if (!made) {
      made = new Histogram({
        name,
        help: help(name),
        labelNames: Object.keys(labels),
        ...(name.endsWith('_seconds') ? {} : { buckets: SIZE_BUCKETS }),
        registers: [registry],
      });
      histograms.set(name, made);
    }
    return made;
  };
  return {
    registry,
    count(name, labels = {}, by = 1) {
      counter(name, labels).inc(labels, by);
    },
    observe(name, value, labels = {}) {
      histogram(name, labels).observe(labels, value);
    },
    zero(kind, name, labels) {
      if (kind === 'counter') counter(name, labels).inc(labels, 0);
      else histogram(name, labels).zero(labels);
    },
    gauge(name, gaugeHelp, labelNames, collect) {
      new Gauge({
        name,
        help: gaugeHelp,
        labelNames: [...labelNames],
        registers: [registry],
        async collect() {
          this.reset();
          for (const { labels = {}, value } of await collect()) this.set(labels, value);
        },
      });
    },
  };
}
