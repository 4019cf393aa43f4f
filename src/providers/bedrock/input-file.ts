/**
 * The staged input of a Bedrock job: one JSONL line `{recordId, modelInput}` per request, where
 * `modelInput` is the Anthropic-on-Bedrock InvokeModel body: the stored input (the client's params
 * less `model`) with `anthropic_version` added; the model is the job's `modelId` (providers.md §2.5).
 * Lines are produced as the upload consumes them, in chunks of about 64 KB.
 */
import type { BatchRequest } from '../provider.js';
import { ProviderError } from '../provider.js';
import { recordIdOf } from './record-ids.js';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

const CHUNK_CHARS = 64 * 1024;
const OPEN_BRACE = 123; // '{'

/** `modelInput` as JSON text, built around the stored input without parsing it. */
function modelInputText(input: string): string {
  const text = input.trimStart();
  if (text.charCodeAt(0) !== OPEN_BRACE) throw new Error('a request input is not a JSON object');
  const rest = text.slice(1).trimStart();
  const version = `{"anthropic_version":${JSON.stringify(BEDROCK_ANTHROPIC_VERSION)}`;
  return rest.startsWith('}') ? `${version}${rest}` : `${version},${rest}`;
}

/** The JSONL bytes of `requests`, record ids by position; throws `rejected` past `maxFileBytes`. */
export async function* inputFileChunks(
  requests: AsyncIterable<BatchRequest>,
  maxFileBytes: number,
): AsyncGenerator<Buffer> {
  let chunk = '';
  let total = 0;
  let position = 0;
  for await (const request of requests) {
    const line = `{"recordId":"${recordIdOf(position++)}","modelInput":${modelInputText(request.input)}}\n`;
    total += Buffer.byteLength(line);
    if (total > maxFileBytes) {
      throw new ProviderError('rejected', `the batch input file exceeds Bedrock's ${maxFileBytes}-byte file limit`);
    }
    chunk += line;
    if (chunk.length >= CHUNK_CHARS) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (chunk !== '') yield Buffer.from(chunk);
}
