/** Progress of a long command: a bar with rate and ETA on a terminal, a plain line now and then otherwise, nothing under --json. */
import { MultiBar, Presets } from 'cli-progress';
import type { Output } from './output.js';

export interface Progress {
  /** `done` items of `total` so far. */
  update(done: number): void;
  /** A line for the person (a refused item) that leaves the bar whole below it. */
  log(text: string): void;
  stop(): void;
}

/** Plain lines when stderr is not a terminal: at most one every this often. */
const PLAIN_EVERY_MS = 2000;

export function startProgress(out: Output, label: string, total: number, start = 0): Progress {
  if (out.json) return { update() {}, log() {}, stop() {} };
  if (process.stderr.isTTY) {
    // A MultiBar of one bar: its log() prints a line above the bar, which it redraws below.
    const bars = new MultiBar(
      {
        format: `${label} [{bar}] {percentage}% | {value}/{total} | {rate}/s | ETA {eta_formatted}`,
        stream: process.stderr,
        etaBuffer: 200,
        // The whole line fits 80 columns up to 100,000-line files (a longer one is cut at the edge).
        barsize: 24,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    const began = Date.now();
    const bar = bars.create(total, start, { rate: '0' });
    return {
      update(done) {
        bar.update(done, { rate: ((done - start) / Math.max(0.001, (Date.now() - began) / 1000)).toFixed(0) });
      },
      log: (text) => bars.log(`${text}\n`),
      stop: () => {
        // The bar writes logged lines at its next redraw, and stopping writes none: a run shorter
        // than a redraw interval would end without them. One last redraw writes them first.
        bars.update();
        bars.stop();
      },
    };
  }
  let last = 0;
  let current = start;
  /** The count the last line showed: the last line at stop is not written twice. */
  let shown = -1;
  const began = Date.now();
  const line = () => {
    shown = current;
    const rate = (current - start) / Math.max(0.001, (Date.now() - began) / 1000);
    process.stderr.write(`${label}: ${current}/${total} (${rate.toFixed(0)}/s)\n`);
  };
  return {
    update(done) {
      current = done;
      if (Date.now() - last >= PLAIN_EVERY_MS) {
        last = Date.now();
        line();
      }
    },
    log: (text) => process.stderr.write(`${text}\n`),
    stop: () => {
      if (current !== shown) line();
    },
  };
}
