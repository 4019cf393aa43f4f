/**
 * The whole-attempt deadline of webhook requests, with one timer for all of them. Each request
 * gets an EventEmitter as its abort signal (undici takes one) and a sweep aborts those whose
 * deadline has passed. An AbortSignal.timeout per request (a timer, an EventTarget and its
 * listeners) cost the delivery loop about as much as signing the body (bench:webhook profiles).
 */
import { EventEmitter } from 'node:events';

/** How late past its deadline a request may be aborted, at most. */
export const SWEEP_MS = 100;

interface Open {
  at: number;
  signal: EventEmitter;
}

export class RequestDeadlines {
  /** Requests in flight, in the order they started; with one timeout, that is deadline order. */
  private readonly open = new Set<Open>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly timeoutMs: number,
    /** Monotonic milliseconds. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A signal aborted `timeoutMs` from now (within SWEEP_MS), and `done` to call when the request is over. */
  start(): { signal: EventEmitter; done: () => void } {
    const entry = { at: this.now() + this.timeoutMs, signal: new EventEmitter() };
    this.open.add(entry);
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(), SWEEP_MS);
      this.timer.unref();
    }
    return {
      signal: entry.signal,
      done: () => {
        this.open.delete(entry);
        if (this.open.size === 0 && this.timer !== null) {
          clearInterval(this.timer);
          this.timer = null;
        }
      },
    };
  }

  private sweep(): void {
    const now = this.now();
    for (const entry of this.open) {
      if (entry.at > now) return;
      this.open.delete(entry);
      entry.signal.emit('abort');
    }
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
