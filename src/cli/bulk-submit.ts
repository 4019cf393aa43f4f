/**
 * `barge submit --file requests.jsonl`: one POST /cargo/load per line, a bounded number at once,
 * resumable. The lines accepted in one turn of the event loop are appended to the map file at its
 * end (one synchronous write, not one a line), and each line's Idempotency-Key comes from the
 * file's content and the line number: run again after a crash or Ctrl-C, the command skips what
 * the map holds, and a line whose answer was lost (or whose entry a crash kept from the map) gets
 * its first cargo back instead of a second one.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import type { Barge } from '../client/barge.js';
import { BargeError } from '../client/errors.js';
import { digestOf, LineReader, lineKey, mapPathOf, readCargoMap } from './cargo-map.js';
import type { Output } from './output.js';
import { type Progress, startProgress } from './progress.js';

export interface Refusal {
  line: number;
  status: number;
  detail: unknown;
}

export interface BulkSummary {
  file: string;
  map: string;
  lines: number;
  /** Lines accepted by this run. */
  submitted: number;
  /** Lines the map already held. */
  skipped: number;
  refused: Refusal[];
  /** Whether the run stopped before the end: Ctrl-C, or an answer that concerns every line (`stopped`). */
  interrupted: boolean;
  /**
   * What stopped the run, when it was not Ctrl-C: no answer (status 0: the service is unreachable),
   * a refused key, or a rate limit or server error its retries did not outlast. What was accepted
   * before it is in the map, so running the same command again goes on from there.
   */
  stopped: { status: number; message: string } | null;
}

export async function submitFile(
  barge: Barge,
  file: string,
  options: { concurrency: number; out: Output; signal: AbortSignal },
): Promise<BulkSummary> {
  const { hash, lines } = await digestOf(file);
  const map = mapPathOf(file);
  const done = await readCargoMap(map);
  const mapFile = new MapAppender(openForAppend(map));
  // Lines the map holds are done before this run starts: the bar's rate and ETA count this run's.
  const summary: BulkSummary = {
    file,
    map,
    lines,
    submitted: 0,
    skipped: done.size,
    refused: [],
    interrupted: false,
    stopped: null,
  };
  const progress = startProgress(options.out, 'submit', lines, done.size);
  let settled = done.size;
  let fatal: unknown = null;
  // One reader of the file shared by every sender.
  const source = new LineReader(file);
  const sender = async () => {
    for (;;) {
      if (options.signal.aborted || fatal !== null) return;
      const next = source.next();
      if (next === null) return;
      const { line, text } = next;
      if (done.has(line)) continue;
      if (text.trim() === '') {
        progress.update(++settled);
        continue;
      }
      try {
        // The line goes as it is: its metadata stays verbatim, and the service refuses what is not JSON.
        const loaded = await barge.loadText(text, { idempotencyKey: lineKey(hash, line) });
        mapFile.append(`${JSON.stringify({ line, cargo_id: loaded.cargo_id })}\n`);
        summary.submitted++;
      } catch (err) {
        // A refusal of this line; a refused key (401, 403) or a rate limit concerns every line.
        if (
          err instanceof BargeError &&
          err.status >= 400 &&
          err.status < 500 &&
          ![401, 403, 429].includes(err.status)
        ) {
          refuse(summary, { line, status: err.status, detail: err.detail }, progress);
        } else {
          fatal = err;
          return;
        }
      }
      progress.update(++settled);
    }
  };
  // Every sender ends before the map closes, also when one fails (reading the input), so no
  // accepted line is left out of it.
  const ended = await Promise.allSettled(Array.from({ length: options.concurrency }, sender));
  source.close();
  progress.stop();
  mapFile.close();
  const failed = ended.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  if (fatal !== null) {
    // Not a BargeError: a bug or the file, not the service; the summary would mislead.
    if (!(fatal instanceof BargeError)) throw fatal;
    summary.stopped = { status: fatal.status, message: fatal.message };
  }
  summary.interrupted = options.signal.aborted || summary.stopped !== null;
  return summary;
}

function refuse(summary: BulkSummary, refusal: Refusal, progress: Progress): void {
  summary.refused.push(refusal);
  const detail = typeof refusal.detail === 'string' ? refusal.detail : JSON.stringify(refusal.detail);
  progress.log(`line ${refusal.line}: ${detail}`);
}

/** The map's entries, written together at the end of the event loop's turn that accepted them. */
class MapAppender {
  private pending = '';
  private scheduled = false;
  private closed = false;
  // A process that exits meanwhile (a second Ctrl-C) writes what it accepted first.
  private readonly onExit = () => this.flush();

  constructor(private readonly fd: number) {
    process.once('exit', this.onExit);
  }

  append(entry: string): void {
    this.pending += entry;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  close(): void {
    this.flush();
    this.closed = true;
    process.removeListener('exit', this.onExit);
    closeSync(this.fd);
  }

  private flush(): void {
    this.scheduled = false;
    if (this.pending === '' || this.closed) return;
    writeSync(this.fd, this.pending);
    this.pending = '';
  }
}

/** The map opened for appending; a last line a crash cut short is ended first, so the next entry stands alone. */
function openForAppend(path: string): number {
  const fd = openSync(path, 'a+');
  const { size } = fstatSync(fd);
  if (size > 0) {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] !== 0x0a) writeSync(fd, '\n');
  }
  return fd;
}
