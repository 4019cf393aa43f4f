/**
 * A deadline on every provider call (BARGE_PROVIDER_CALL_TIMEOUT_MS), by one decorator: a call
 * that makes no progress for the deadline is aborted and fails as a `retryable` ProviderError, the
 * way a refused connection does, so the pipeline's verdicts and its lost-create rules apply as they
 * are. An upload (a submit streaming its requests) and a results download are bounded by progress,
 * not by total time: each request read into the body, and each result read out, starts the
 * deadline again, so a large file is not cut off while it moves.
 */
import type { BatchRequest, JobRef, Provider, RequestResult } from './provider.js';
import { ProviderError } from './provider.js';

/**
 * The deadline of one call: aborted (its signal, and the call's race) when not touched for `ms`.
 * Touching only notes the time: one timer a call, re-armed when it fires early, instead of a timer
 * per request or result of a 100,000-line file.
 */
class CallDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private lastProgress = performance.now();
  private paused = false;
  /** The race in progress: rejected when the deadline passes. */
  private expire: ((err: ProviderError) => void) | null = null;
  private error: ProviderError | null = null;

  constructor(
    private readonly ms: number,
    private readonly what: string,
  ) {
    this.arm(ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The call made progress: the deadline starts again. */
  touch(): void {
    this.lastProgress = performance.now();
    this.paused = false;
  }

  /** `call`'s outcome, or the deadline's error if it passes first (the call is aborted then). */
  race<T>(call: Promise<T>): Promise<T> {
    if (this.error) {
      call.catch(() => {});
      return Promise.reject(this.error);
    }
    return new Promise<T>((resolve, reject) => {
      this.expire = reject;
      call.then(
        (value) => {
          this.expire = null;
          resolve(value);
        },
        (err: unknown) => {
          this.expire = null;
          reject(err);
        },
      );
    });
  }

  /** The clock stops while barge, not the provider, holds the call (a consumer storing a result). */
  pause(): void {
    this.paused = true;
  }

  end(): void {
    clearTimeout(this.timer);
  }

  private arm(delay: number): void {
    this.timer = setTimeout(() => this.check(), delay);
  }

  private check(): void {
    const idle = performance.now() - this.lastProgress;
    if (this.paused || idle < this.ms) {
      this.arm(this.paused ? this.ms : this.ms - idle);
      return;
    }
    this.error = new ProviderError('retryable', `${this.what}: no progress within ${this.ms} ms (the call deadline)`);
    this.controller.abort(this.error);
    this.expire?.(this.error);
  }
}

/** `provider` with every call bounded by `deadlineMs` without progress. */
export function withCallDeadline(provider: Provider, deadlineMs: number): Provider {
  const bounded = async <T>(call: string, run: (deadline: CallDeadline) => Promise<T>): Promise<T> => {
    const deadline = new CallDeadline(deadlineMs, `${provider.name} ${call}`);
    try {
      return await deadline.race(run(deadline));
    } finally {
      deadline.end();
    }
  };
  return {
    name: provider.name,
    limits: provider.limits,
    submit: (input) =>
      bounded('submit', (deadline) =>
        provider.submit({ ...input, requests: touching(input.requests, deadline), signal: deadline.signal }),
      ),
    findSubmitted: (lookup) => bounded('find_submitted', (d) => provider.findSubmitted(lookup, d.signal)),
    status: (job) => bounded('status', (d) => provider.status(job, d.signal)),
    cancel: (job) => bounded('cancel', (d) => provider.cancel(job, d.signal)),
    cleanup: (job) => bounded('cleanup', (d) => provider.cleanup(job, d.signal)),
    // A check bounds its own calls (CHECK_TIMEOUT_MS): a person waits for it at a terminal.
    check: () => provider.check(),
    results: (job) => boundedResults(provider, job, deadlineMs),
  };
}

/** The requests as the provider reads them into its upload, each one progress. */
async function* touching(requests: AsyncIterable<BatchRequest>, deadline: CallDeadline): AsyncGenerator<BatchRequest> {
  for await (const request of requests) {
    deadline.touch();
    yield request;
  }
}

/**
 * A results download whose every item must come within the deadline of the one before. An
 * iterator of its own rather than an async generator around the provider's: a collection reads a
 * job's every result through it, and a generator's layer of promises is as costly again.
 */
function boundedResults(provider: Provider, job: JobRef, deadlineMs: number): AsyncIterable<RequestResult> {
  return {
    [Symbol.asyncIterator]() {
      const deadline = new CallDeadline(deadlineMs, `${provider.name} results`);
      const iterator = provider.results(job, deadline.signal)[Symbol.asyncIterator]();
      const stop = () => {
        deadline.end();
        // Not awaited when the deadline passed: a generator stuck in a call finishes only once aborted.
        iterator.return?.().catch(() => {});
      };
      return {
        async next() {
          deadline.touch();
          try {
            const next = await deadline.race(iterator.next());
            // The time the consumer takes with an item (storing results) is not the provider's.
            if (next.done) deadline.end();
            else deadline.pause();
            return next;
          } catch (err) {
            stop();
            throw err;
          }
        },
        async return() {
          stop();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
