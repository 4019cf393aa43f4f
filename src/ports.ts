/**
 * What every folder may use besides the domain (the Clock stays in domain/clock.ts): a logger and
 * a metrics sink, passed in by the composition root (src/service.ts), never imported as globals.
 */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/**
 * Counters and timings, named like Prometheus metrics (`barge_loop_steps_total`). The service
 * passes a real sink; without one nothing is kept.
 */
export interface Metrics {
  count(name: string, labels?: Record<string, string>, by?: number): void;
  observe(name: string, value: number, labels?: Record<string, string>): void;
  /**
   * Makes a counter's or a histogram's series for these labels exist at 0 before its first event:
   * a series that appears only when something first happens leaves the alerts and dashboards
   * written against it with nothing to read until then.
   */
  zero(kind: 'counter' | 'histogram', name: string, labels: Record<string, string>): void;
}

export const noMetrics: Metrics = { count() {}, observe() {}, zero() {} };
