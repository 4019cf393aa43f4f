/**
 * Splits a byte stream (a downloaded batch file) into its lines as the bytes arrive, so a
 * 100,000-line file is never held whole: only the current chunk and one partial line are.
 */

export async function* linesOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let partial = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // `stream: true` keeps a multi-byte character cut between chunks for the next chunk.
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      partial += text;
      let start = 0;
      for (let end = partial.indexOf('\n'); end >= 0; end = partial.indexOf('\n', start)) {
        const line = partial.slice(start, end).trim();
        if (line !== '') yield line;
        start = end + 1;
      }
      partial = partial.slice(start);
      if (done) break;
    }
    const last = partial.trim();
    if (last !== '') yield last;
  } finally {
    // The consumer may stop early (an error, a canceled collection): stop the download with it.
    await reader.cancel().catch(() => {});
  }
}
