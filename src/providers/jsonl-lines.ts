/**
 * Splits a byte stream (a downloaded batch file) into its lines as the bytes arrive, so a
 * 100,000-line file is never held whole: only the current chunk and one partial line are.
 */
import { LineSplitter } from '../domain/line-splitter.js';

/** The stream's lines, trimmed, blank ones left out. */
export async function* linesOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const splitter = new LineSplitter();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      for (const text of done ? [splitter.end() ?? ''] : splitter.push(value)) {
        const line = text.trim();
        if (line !== '') yield line;
      }
      if (done) return;
    }
  } finally {
    // The consumer may stop early (an error, a canceled collection): stop the download with it.
    await reader.cancel().catch(() => {});
  }
}
