/**
 * The files of a bulk submission: the input's content hash and line count, and its map file
 * (`<input>.cargo`, one `{"line", "cargo_id"}` a line, appended as each line is accepted).
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

export const mapPathOf = (input: string) => `${input}.cargo`;

/** SHA-256 of the file and its number of lines (a last line without a newline counts), read as a stream. */
export async function digestOf(path: string): Promise<{ hash: string; lines: number }> {
  const hash = createHash('sha256');
  let newlines = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) newlines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1] as number;
  }
  return { hash: hash.digest('hex'), lines: newlines + (last === 0x0a ? 0 : 1) };
}

/**
 * The Idempotency-Key of one line: the same file content and line give the same key on every run,
 * so a line whose answer was lost (a crash, Ctrl-C) is not made twice when the command runs again.
 */
export const lineKey = (hash: string, line: number) => `barge-bulk-${hash.slice(0, 40)}-${line}`;

/**
 * The cargo of every line the map records. A line cut short by a crash (the last one) is skipped:
 * its line is submitted again, and its Idempotency-Key brings back the same cargo.
 */
export async function readCargoMap(path: string): Promise<Map<number, string>> {
  const map = new Map<number, string>();
  if (!existsSync(path)) return map;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    try {
      const entry = JSON.parse(text) as { line?: unknown; cargo_id?: unknown };
      if (typeof entry.line === 'number' && typeof entry.cargo_id === 'string') map.set(entry.line, entry.cargo_id);
    } catch {
      // a torn last line
    }
  }
  return map;
}

/**
 * The input's lines, numbered from 1, read as a stream with backpressure: a chunk is read only
 * when the lines before it are taken (readline's iterator would buffer a fast file in memory).
 */
export async function* numberedLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  let line = 0;
  let rest = '';
  const decoder = new TextDecoder();
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = parts.pop() ?? '';
    for (const text of parts) yield { line: ++line, text: text.endsWith('\r') ? text.slice(0, -1) : text };
  }
  rest += decoder.decode();
  if (rest !== '') yield { line: ++line, text: rest };
}
