/** Produces the Message Batches create body from a batch's streamed requests, as bytes, without parsing them. */
import type { BatchRequest } from '../../domain/batch-requests.js';
import { ProviderError } from '../provider.js';

/** Text leaves in chunks of about this many characters, so the JS heap holds one chunk at a time. */
const CHUNK_CHARS = 1024 * 1024;
const OPEN_BRACE = 123; // '{'

export interface BodyLimits {
  maxRequests: number;
  /** The API's limit on the whole create body (413 above it). */
  maxBodyBytes: number;
}

/**
 * The create body `{requests: [{custom_id, params}]}` as JSON bytes, produced as the upload reads
 * it. `params` is the stored input with `"model"` added in front: the input is JSON text of an
 * object (BatchRequest), so the body is assembled as text around it, and a 100,000-request batch is
 * never a list of parsed objects, nor (sent as a chunked stream) a 90 MB buffer. The request count
 * and the 256 MB limit are checked as the bytes are produced: past either, the producer throws a
 * `rejected` ProviderError, which ends the upload before the API could accept a batch. The batcher
 * packs below both, so this is a guard, not a path.
 */
export async function* createBodyChunks(
  model: string,
  requests: AsyncIterable<BatchRequest>,
  limits: BodyLimits,
): AsyncGenerator<Uint8Array> {
  const modelField = `"params":{"model":${JSON.stringify(model)}`;
  let bytes = 0;
  let text = '{"requests":[';
  let count = 0;
  const chunk = () => {
    const bytesOf = Buffer.from(text);
    bytes += bytesOf.length;
    text = '';
    if (bytes > limits.maxBodyBytes) {
      throw new ProviderError('rejected', `the create body exceeds ${limits.maxBodyBytes} bytes`);
    }
    return bytesOf;
  };
  for await (const request of requests) {
    count++;
    if (count > limits.maxRequests) {
      throw new ProviderError('rejected', `the batch has more than ${limits.maxRequests} requests`);
    }
    const input = request.input.trimStart();
    if (input.charCodeAt(0) !== OPEN_BRACE) {
      throw new Error(`request ${request.customId}: its input is not a JSON object`);
    }
    const rest = input.slice(1).trimStart();
    text += `${count > 1 ? ',' : ''}{"custom_id":${JSON.stringify(request.customId)},${modelField}`;
    text += rest.startsWith('}') ? rest : `,${rest}`;
    text += '}';
    if (text.length >= CHUNK_CHARS) yield chunk();
  }
  text += ']}';
  yield chunk();
}
