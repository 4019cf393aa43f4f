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

/** The longest the main thread's long loops keep the event loop, as a rule. */
const SLICE_MS = 5;

/**
 * Splits synchronous work into slices of about SLICE_MS: a loop checks `due` after each item
 * (a clock read) and awaits `pause()` when it is, which gives a turn back. /health stays answered
 * within tens of milliseconds during a large collection (bench:pipeline --rss); a turn every few
 * milliseconds costs the loop little.
 */
export class TimeSlices {
  private sliceStart = performance.now();

  /** The slice has run its time: the caller should `await pause()` now. */
  get due(): boolean {
    return performance.now() - this.sliceStart >= SLICE_MS;
  }

  /** Gives a turn back and starts the next slice. */
  async pause(): Promise<void> {
    await nextTurn();
    this.sliceStart = performance.now();
  }
}
