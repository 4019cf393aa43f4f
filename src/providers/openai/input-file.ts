/**
 * The batch input file, produced as the upload is sent: requests are read from the store, one
 * translated line at a time, and leave in chunks of about 64 KB, so a 50,000-request file is
 * never a list of parsed requests (nor, with a streaming upload, one buffer) in memory.
 */
import type { BatchRequest } from '../provider.js';
import { ProviderError } from '../provider.js';
import { inputLine } from './translate-request.js';

const CHUNK_BYTES = 64 * 1024;

/** The JSONL bytes of `requests`; throws a `rejected` ProviderError past `maxFileBytes`. */
export async function* inputFileChunks(
  model: string,
  requests: AsyncIterable<BatchRequest>,
  maxFileBytes: number,
): AsyncGenerator<Uint8Array> {
  let chunk = '';
  let total = 0;
  for await (const request of requests) {
    const line = `${inputLine(model, request.customId, request.input)}\n`;
    total += Buffer.byteLength(line);
    if (total > maxFileBytes) {
      throw new ProviderError(
        'rejected',
        `file_too_large: the batch input file exceeds OpenAI's ${maxFileBytes}-byte limit`,
      );
    }
    chunk += line;
    if (chunk.length >= CHUNK_BYTES) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (chunk !== '') yield Buffer.from(chunk);
}
