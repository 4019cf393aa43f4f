/**
 * The S3 side of the Bedrock emulator (bedrock-emulator.ts): reading a job's input JSONL from the
 * S3 server while the job validates, checking each record's `modelInput` when it is processed, and
 * writing what a job leaves behind: one shuffled `<input name>.out` per input file that has
 * processed records and `manifest.json.out`, both under `{output s3Uri}/{jobId}/`
 * (providers.md §2.5–2.6, field-notes.md §3.1). The failure and record-error texts follow the
 * shapes users report ("Malformed input request: …"); they are not copied from AWS verbatim.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { EXTRA_FIELD, estimateTokens, jsonlLines, REPLY_WORDS, randomId, shuffled } from './emulator-http.js';

/** The API's pattern for `s3Uri` (API_ModelInvocationJobS3InputDataConfig). */
export const S3_URI =
  /^s3:\/\/[a-z0-9][-.a-z0-9]{1,61}[a-z0-9](?:\/[-!_*'().a-z0-9A-Z]+(?:\/[-!_*'().a-z0-9A-Z]+)*)?\/?$/;
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

export interface InputRecord {
  recordId: string;
  modelInput: Record<string, unknown>;
  /** The input object the line came from. */
  key: string;
}

export type BedrockOutcome =
  | { type: 'succeeded'; modelOutput?: Record<string, unknown> }
  | { type: 'errored'; errorCode: number; errorMessage: string };

export interface OutputLine {
  key: string;
  kind: 'succeeded' | 'errored';
  json: Record<string, unknown>;
  inputTokens: number;
  outputTokens: number;
}

export interface RecordLimits {
  minRecords: number;
  maxRecords: number;
  maxRecordsPerFile: number;
}

export function parseS3Uri(uri: string): { bucket: string; key: string } {
  const rest = uri.slice('s3://'.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? { bucket: rest, key: '' } : { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}

const withSlash = (prefix: string) => (prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`);
const baseName = (key: string) => key.slice(key.lastIndexOf('/') + 1);

async function text(s3: S3Client, bucket: string, key: string): Promise<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (out.Body as { transformToString(): Promise<string> }).transformToString();
}

/** The `.jsonl` objects the input `s3Uri` names: one object, or every one under a folder prefix. */
async function inputKeys(s3: S3Client, bucket: string, key: string): Promise<string[]> {
  if (key.endsWith('.jsonl')) return [key];
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: withSlash(key), ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) if (object.Key?.endsWith('.jsonl')) keys.push(object.Key);
    token = page.NextContinuationToken;
  } while (token);
  return keys.sort();
}

/**
 * What the Validating step checks: the files can be read, each line is `{recordId?, modelInput}`,
 * and the record counts are within the quotas. It does not look inside `modelInput` (the API page:
 * "validation doesn't check if the modelInput value matches the request body").
 */
export async function readInput(
  s3: S3Client,
  uri: string,
  limits: RecordLimits,
): Promise<{ records: InputRecord[]; keys: string[] } | { failure: string }> {
  const { bucket, key } = parseS3Uri(uri);
  let keys: string[];
  const records: InputRecord[] = [];
  try {
    keys = await inputKeys(s3, bucket, key);
    if (keys.length === 0) return { failure: `No .jsonl input files were found at ${uri}.` };
    for (const file of keys) {
      const lines = jsonlLines(await text(s3, bucket, file));
      const where = `s3://${bucket}/${file}`;
      if (lines.length > limits.maxRecordsPerFile) {
        return {
          failure: `The input file ${where} contains ${lines.length} records, more than the maximum of ${limits.maxRecordsPerFile} records per input file.`,
        };
      }
      for (const [index, line] of lines.entries()) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          return { failure: `Line ${index + 1} of ${where} is not valid JSON.` };
        }
        const { recordId, modelInput } = (parsed ?? {}) as { recordId?: unknown; modelInput?: unknown };
        if (typeof modelInput !== 'object' || modelInput === null || Array.isArray(modelInput)) {
          return { failure: `Line ${index + 1} of ${where} has no modelInput object.` };
        }
        if (recordId !== undefined && typeof recordId !== 'string') {
          return { failure: `Line ${index + 1} of ${where} has a recordId that is not a string.` };
        }
        // "If you omit the recordId field, Amazon Bedrock adds it in the output."
        records.push({
          recordId: recordId ?? randomId('', 11),
          modelInput: modelInput as Record<string, unknown>,
          key: file,
        });
      }
    }
  } catch (err) {
    const code = (err as { name?: string }).name ?? 'Error';
    return { failure: `Amazon Bedrock could not read the input at ${uri}: ${code}.` };
  }
  if (records.length < limits.minRecords) {
    return {
      failure: `The job contains ${records.length} records, fewer than the minimum of ${limits.minRecords} records per batch inference job for this model.`,
    };
  }
  if (records.length > limits.maxRecords) {
    return {
      failure: `The job contains ${records.length} records, more than the maximum of ${limits.maxRecords} records per batch inference job for this model.`,
    };
  }
  return { records, keys };
}

const malformed = (detail: string) => `Malformed input request: ${detail}, please reformat your input and try again.`;

/** Why InvokeModel would refuse this Anthropic body (null: it is fine). */
export function modelInputProblem(input: Record<string, unknown>): string | null {
  for (const required of ['anthropic_version', 'max_tokens', 'messages']) {
    if (!(required in input)) return malformed(`#: required key [${required}] not found`);
  }
  if ('model' in input) return malformed('#: extraneous key [model] is not permitted');
  if (input.anthropic_version !== BEDROCK_ANTHROPIC_VERSION) {
    return malformed(`#/anthropic_version: ${JSON.stringify(input.anthropic_version)} is not a valid enum value`);
  }
  if (!Number.isInteger(input.max_tokens) || (input.max_tokens as number) < 1) {
    return malformed(`#/max_tokens: ${JSON.stringify(input.max_tokens)} is not greater or equal to 1`);
  }
  if (!Array.isArray(input.messages)) return malformed('#/messages: expected type: JSONArray');
  return null;
}

/** The model part of an id or ARN (`arn:…:foundation-model/anthropic.claude…` → `anthropic.claude…`). */
export const bareModelId = (modelId: string) => (modelId.startsWith('arn:') ? baseName(modelId) : modelId);

/** A Claude Messages response as InvokeModel returns it: the emulator's reply, cut at max_tokens. */
export function modelOutputFor(modelId: string, input: Record<string, unknown>) {
  const words = REPLY_WORDS.slice(0, input.max_tokens as number);
  return {
    id: randomId('msg_bdrk_01', 22),
    type: 'message',
    role: 'assistant',
    model: bareModelId(modelId),
    content: [{ type: 'text', text: words.join(' ') }],
    stop_reason: words.length < REPLY_WORDS.length ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: estimateTokens([input.system, input.messages]), output_tokens: words.length },
    ...EXTRA_FIELD,
  };
}

/** The output line of a processed record; a bad `modelInput` errors whatever outcome was chosen. */
export function outputLine(record: InputRecord, outcome: BedrockOutcome, modelId: string): OutputLine {
  const { recordId, modelInput, key } = record;
  const problem = modelInputProblem(modelInput);
  if (outcome.type === 'errored' || problem) {
    const error =
      outcome.type === 'errored'
        ? { errorCode: outcome.errorCode, errorMessage: outcome.errorMessage }
        : { errorCode: 400, errorMessage: problem };
    return { key, kind: 'errored', json: { recordId, modelInput, error }, inputTokens: 0, outputTokens: 0 };
  }
  const modelOutput = { ...modelOutputFor(modelId, modelInput), ...outcome.modelOutput };
  const usage = (modelOutput.usage ?? {}) as { input_tokens?: number; output_tokens?: number };
  return {
    key,
    kind: 'succeeded',
    json: { recordId, modelInput, modelOutput },
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
  };
}

export interface Manifest {
  totalRecordCount: number;
  processedRecordCount: number;
  successRecordCount: number;
  errorRecordCount: number;
  inputTokenCount: number;
  outputTokenCount: number;
}

export function manifestOf(totalRecordCount: number, lines: readonly OutputLine[]): Manifest {
  const manifest = {
    totalRecordCount,
    processedRecordCount: lines.length,
    successRecordCount: 0,
    errorRecordCount: 0,
    inputTokenCount: 0,
    outputTokenCount: 0,
  };
  for (const line of lines) {
    if (line.kind === 'succeeded') manifest.successRecordCount++;
    else manifest.errorRecordCount++;
    manifest.inputTokenCount += line.inputTokens;
    manifest.outputTokenCount += line.outputTokens;
  }
  return manifest;
}

/**
 * Writes `{output s3Uri}/{jobId}/<input name>.out` (shuffled lines, only for inputs with processed
 * records: a record never processed leaves no line) and `manifest.json.out`; returns their keys.
 */
export async function writeOutput(
  s3: S3Client,
  target: { outputS3Uri: string; jobId: string; inputKeys: readonly string[]; manifest: Manifest },
  lines: readonly OutputLine[],
  random: () => number,
): Promise<string[]> {
  const { bucket, key } = parseS3Uri(target.outputS3Uri);
  const folder = `${withSlash(key)}${target.jobId}/`;
  // `application/octet-stream`: what gateways reading real output expect (field-notes.md §3.1).
  const put = (name: string, body: string) =>
    s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `${folder}${name}`,
        Body: body,
        ContentType: 'application/octet-stream',
      }),
    );
  const written: string[] = [];
  for (const inputKey of target.inputKeys) {
    const mine = lines.filter((line) => line.key === inputKey);
    if (mine.length === 0) continue;
    const name = `${baseName(inputKey)}.out`;
    await put(
      name,
      `${shuffled(mine, random)
        .map((line) => JSON.stringify(line.json))
        .join('\n')}\n`,
    );
    written.push(`${folder}${name}`);
  }
  await put('manifest.json.out', `${JSON.stringify(target.manifest)}\n`);
  written.push(`${folder}manifest.json.out`);
  return written;
}
