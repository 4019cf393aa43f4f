// The part of autocannon's programmatic API the benchmarks use (the package ships no types, and
// @types/autocannon would be one more dependency for a handful of fields).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  /** One connection. `reqsMade` and `responseMax` are internals that bench/submit.ts relies on. */
  export interface Client extends EventEmitter {
    reqsMade: number;
    responseMax: number | undefined;
  }

  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    /** Total requests, then stop (instead of `duration`). */
    amount?: number;
    timeout?: number;
    sampleInt?: number;
    setupClient?: (client: Client) => void;
    verifyBody?: (body: string) => boolean;
  }

  export interface Histogram {
    average: number;
    p50: number;
    p99: number;
    max: number;
  }

  export interface Result {
    latency: Histogram;
    requests: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
    on(event: 'response', listener: (client: Client, statusCode: number, resBytes: number, ms: number) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export default function autocannon(options: Options, callback: (err: Error | null, result: Result) => void): Instance;
}
