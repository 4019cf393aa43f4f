/**
 * Cuts UTF-8 bytes that arrive in chunks (a file read piece by piece, a download) into lines. The
 * newline byte is never part of another UTF-8 character, so each chunk's run of whole lines is cut
 * on it and decoded at once by Buffer#toString; a TextDecoder in streaming mode (ICU) costs several
 * times as much a line. Only the bytes of the line a chunk cuts are kept from one chunk to the next.
 *
 * As a TextDecoder would: a byte order mark at the start is dropped, and bytes that are not UTF-8
 * read as U+FFFD. A line keeps a `\r` before its newline: the caller decides what a line end is.
 */
export class LineSplitter {
  /** The bytes of the line the chunks so far cut, joined once it ends: a long line costs its length once. */
  private cut: Buffer[] = [];
  private started = false;

  /** The lines this chunk ends, in order. The chunk may be reused once this returns. */
  push(bytes: Uint8Array): string[] {
    const chunk = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const end = chunk.lastIndexOf(0x0a);
    if (end === -1) {
      if (chunk.length > 0) this.cut.push(Buffer.from(chunk));
      return [];
    }
    const whole = this.cut.length === 0 ? chunk.subarray(0, end) : Buffer.concat([...this.cut, chunk.subarray(0, end)]);
    this.cut = end + 1 < chunk.length ? [Buffer.from(chunk.subarray(end + 1))] : [];
    return this.decode(whole).split('\n');
  }

  /** The last line, when the bytes did not end with a newline; null when they did. */
  end(): string | null {
    if (this.cut.length === 0) return null;
    const last = this.decode(Buffer.concat(this.cut));
    this.cut = [];
    return last === '' ? null : last;
  }

  private decode(bytes: Buffer): string {
    let from = 0;
    if (!this.started) {
      this.started = true;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) from = 3;
    }
    return bytes.toString('utf8', from);
  }
}
