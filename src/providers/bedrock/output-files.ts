/**
 * Reading a Bedrock job's output: one `<input file>.out` JSONL per input file and
 * `manifest.json.out` under `{output uri}/{job id}/` (providers.md §2.6), each streamed line by line.
 */
import { GetObjectCommand, ListObjectsV2Command, NoSuchKey, type S3Client } from '@aws-sdk/client-s3';
import type { ModelMessage } from '../../domain/model-message.js';
import { linesOf } from '../jsonl-lines.js';
import type { RequestResult } from '../provider.js';
import { s3Location } from './job-state.js';
import { positionOf } from './record-ids.js';

/** One output line: `{recordId, modelInput, modelOutput}`, or `error` instead of `modelOutput`. */
interface OutputLine {
  recordId?: unknown;
  modelOutput?: unknown;
  error?: { errorCode?: unknown; errorMessage?: unknown };
}

/** The folder of a job's output, as bucket and key prefix. */
export function outputFolder(outputUri: string, jobId: string): { bucket: string; prefix: string } {
  const { bucket, key } = s3Location(outputUri);
  return { bucket, prefix: `${key}${key === '' || key.endsWith('/') ? '' : '/'}${jobId}/` };
}

/** The output files' keys (every `.jsonl.out`, the manifest left out), in key order. */
export async function outputKeys(
  s3: S3Client,
  folder: { bucket: string; prefix: string },
  abortSignal?: AbortSignal,
): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: folder.bucket, Prefix: folder.prefix, ContinuationToken: token }),
      { abortSignal },
    );
    for (const object of page.Contents ?? []) {
      if (object.Key?.endsWith('.out') && !object.Key.endsWith('/manifest.json.out')) keys.push(object.Key);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

/**
 * `processedRecordCount` of the job's `manifest.json.out` (Bedrock also writes success, error and
 * token counts), or null when the job wrote none (it ended before running anything).
 */
export async function processedRecordCount(
  s3: S3Client,
  folder: { bucket: string; prefix: string },
  abortSignal?: AbortSignal,
): Promise<number | null> {
  try {
    const out = await s3.send(
      new GetObjectCommand({ Bucket: folder.bucket, Key: `${folder.prefix}manifest.json.out` }),
      { abortSignal },
    );
    const manifest = JSON.parse((await out.Body?.transformToString()) ?? '{}') as { processedRecordCount?: unknown };
    return typeof manifest.processedRecordCount === 'number' ? manifest.processedRecordCount : 0;
  } catch (err) {
    if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return null;
    throw err;
  }
}

/** The lines of one output file as they download; a consumer that stops early stops the download. */
export async function* outputLines(
  s3: S3Client,
  bucket: string,
  key: string,
  abortSignal?: AbortSignal,
): AsyncGenerator<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal });
  if (!out.Body) return;
  yield* linesOf(out.Body.transformToWebStream() as ReadableStream<Uint8Array>);
}

/**
 * One output line as barge's result, its record id mapped back to the custom id at that position
 * (`customIds`, the batch's requests in order): `modelOutput` is the model's response exactly as
 * returned (decisions.md); `error` fails the request with `<errorCode>: <errorMessage>`. Null for a
 * line that is not one of this batch's records (or not JSON at all).
 */
export function resultOfLine(text: string, customIds: readonly string[]): RequestResult | null {
  let line: OutputLine;
  try {
    line = JSON.parse(text) as OutputLine;
  } catch {
    return null;
  }
  const position = positionOf(line.recordId);
  const customId = position === null ? undefined : customIds[position];
  if (customId === undefined) return null;
  if (line.modelOutput !== undefined && line.modelOutput !== null && line.error === undefined) {
    return { customId, success: true, response: line.modelOutput as ModelMessage };
  }
  const code = line.error?.errorCode ?? 'error';
  const message = typeof line.error?.errorMessage === 'string' ? line.error.errorMessage : 'Bedrock gave no message';
  return { customId, success: false, kind: 'errored', error: `${String(code)}: ${message}` };
}
