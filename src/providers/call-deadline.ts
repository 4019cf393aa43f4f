/**
 * A deadline on every provider call (BARGE_PROVIDER_CALL_TIMEOUT_MS), by one decorator: a call
 * that makes no progress for the deadline is aborted and fails as a `retryable` ProviderError, the
 * way a refused connection does, so the pipeline's verdicts and its lost-create rules apply as they
 * are. An upload (a submit streaming its requests) and a results download are bounded by progress,
 * not by total time: each request read into the body, and each result read out, starts the
 * deadline again, so a large file is not cut off while it moves.
 */
import type { BatchRequest, JobRef, Provider } from './provider.js';
import { ProviderError } from './provider.js';

/** The deadline of one call: aborted (its signal, and `expired`) when not touched for `ms`. */
class CallDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private expire!: (err: ProviderError) => void;
  /** Rejects when the deadline passes; never resolves. */
  readonly expired = new Promise<never>((_, reject) => {
    this.expire = reject;
  });

  constructor(
    private readonly ms: number,
    private readonly what: string,
  ) {
    this.expired.catch(() => {});
    this.touch();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The call made progress: the deadline starts again. */
  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const err = new ProviderError('retryable', `${this.what}: no progress within ${this.ms} ms (the call deadline)`);
      this.controller.abort(err);
      this.expire(err);
    }, this.ms);
  }

  /** `call`'s outcome, or the deadline's error if it passes first (the call is aborted then). */
  async race<T>(call: Promise<T>): Promise<T> {
    // An aborted call rejects after the race is decided: that rejection is expected.
    call.catch(() => {});
    return Promise.race([call, this.expired]);
  }

  /** Stops the clock (the call ended, or waits on its consumer, not on the provider). */
  end(): void {
    clearTimeout(this.timer);
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

/** A results download whose every item must come within the deadline of the one before. */
async function* boundedResults(provider: Provider, job: JobRef, deadlineMs: number) {
  const deadline = new CallDeadline(deadlineMs, `${provider.name} results`);
  const iterator = provider.results(job, deadline.signal)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await deadline.race(iterator.next());
      if (next.done) return;
      // The time the consumer takes with an item (storing results) is not the provider's.
      deadline.end();
      yield next.value;
      deadline.touch();
    }
  } finally {
    deadline.end();
    // Not awaited when the deadline passed: a generator stuck in a call finishes only once aborted.
    iterator.return?.().catch(() => {});
  }
}
