/** Builds the Message Batches create body from a batch's streamed requests, as bytes, without parsing them. */
import type { BatchRequest } from '../../domain/batch-requests.js';
import { ProviderError } from '../provider.js';

/** Text is turned into a Blob part every this many characters, so the JS heap holds one part at a time. */
const PART_CHARS = 1024 * 1024;
const OPEN_BRACE = 123; // '{'

export interface CreateBody {
  /** `{"requests":[{"custom_id":…,"params":{"model":…,…}},…]}` as JSON bytes. */
  body: Blob;
  requests: number;
}

export interface BodyLimits {
  maxRequests: number;
  /** The API's limit on the whole create body (413 above it). */
  maxBodyBytes: number;
}

/**
 * The create body `{requests: [{custom_id, params}]}`, where `params` is the stored input with
 * `"model"` added in front. The input is JSON text of an object (BatchRequest), so the body is
 * assembled as text around it: a 100,000-request batch is never a list of parsed objects, and its
 * bytes are held once, off the JS heap, in a Blob made of 1 MB parts. The whole body is built before
 * the call so its size is known (content-length, the 256 MB limit checked here rather than by a 413
 * after the upload) and no store read stays open while the provider is called.
 */
export async function createBody(
  model: string,
  requests: AsyncIterable<BatchRequest>,
  limits: BodyLimits,
): Promise<CreateBody> {
  const modelField = `"params":{"model":${JSON.stringify(model)}`;
  const parts: Blob[] = [];
  let bytes = 0;
  let text = '{"requests":[';
  let count = 0;
  const flush = () => {
    const part = new Blob([text]);
    parts.push(part);
    bytes += part.size;
    text = '';
    if (bytes > limits.maxBodyBytes) {
      throw new ProviderError('rejected', `the create body exceeds ${limits.maxBodyBytes} bytes`);
    }
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
    if (text.length >= PART_CHARS) flush();
  }
  text += ']}';
  flush();
  return { body: new Blob(parts, { type: 'application/json' }), requests: count };
}
