/**
 * Turns of the event loop, for long work on the main thread. The API, the workers' replies from
 * the SQLite write thread and every timer share one event loop: a loop over a 100,000-result
 * collection, or a read of thousands of rows, holds all of them until it gives a turn back. Every
 * folder may use this, like ports.ts.
 */

/** Resolves after one turn: I/O and timers that are ready (an HTTP request, a reply) run first. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Splits synchronous work into slices of about `sliceMs`: a loop calls `pause()` after each item,
 * which gives a turn back once the slice has run its time, and is a cheap check otherwise.
 * /health stays answered within tens of milliseconds during a large collection (bench:pipeline
 * --rss); a few milliseconds a slice costs the loop a turn's overhead every few milliseconds.
 */
export class TimeSlices {
  private sliceStart = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** True when the slice has run its time (the caller should await `pause()` now). */
  get due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Gives a turn back if the slice has run its time. */
  async pause(): Promise<void> {
    if (!this.due) return;
    await nextTurn();
    this.sliceStart = performance.now();
  }
}

/** The longest the main thread's long loops keep the event loop, as a rule. */
export const SLICE_MS = 5;
