/**
 * Where a Bedrock job's files are: its staged input file and the output folder Bedrock writes to,
 * as `s3://` URIs. Written after the upload (a retried create reuses the file) and kept with the job
 * (results are read from the output folder and the input deleted from where it was staged, even
 * if BARGE_BEDROCK_S3_URI changes meanwhile).
 */

export interface BedrockJobState {
  inputUri: string;
  outputUri: string;
  /** The region the job is created in: the model ARN's, else BARGE_BEDROCK_REGION's. */
  region: string;
}

export function jobStateText(state: BedrockJobState): string {
  return JSON.stringify({ inputUri: state.inputUri, outputUri: state.outputUri, region: state.region });
}

/** The state in `text`, or null when there is none or it is not this adapter's. */
export function parseJobState(text: string | null): BedrockJobState | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Partial<Record<keyof BedrockJobState, unknown>>;
    const { inputUri, outputUri, region } = value ?? {};
    return typeof inputUri === 'string' && typeof outputUri === 'string' && typeof region === 'string'
      ? { inputUri, outputUri, region }
      : null;
  } catch {
    return null;
  }
}

/** `s3://bucket/key` → its parts. */
export function s3Location(uri: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!match?.[1]) throw new Error(`not an S3 URI: ${uri}`);
  return { bucket: match[1], key: match[2] ?? '' };
}

/** Where a batch's files go under BARGE_BEDROCK_S3_URI (`s3://bucket/prefix/`, ending in `/`). */
export function stagingFor(s3Uri: string, batchId: string, region: string): BedrockJobState {
  return { inputUri: `${s3Uri}${batchId}/input.jsonl`, outputUri: `${s3Uri}${batchId}/output/`, region };
}

/**
 * The job name and client request token of a batch: derived from barge's batch id, so a create
 * repeated after a crash names the same job (Bedrock returns it instead of making a second) and a
 * lost one can be found by name. Bedrock allows no `_` in either (providers.md §2.2).
 */
export function jobNameOf(batchId: string): string {
  return `barge-${requestTokenOf(batchId)}`;
}

export function requestTokenOf(batchId: string): string {
  return batchId.replace(/[^A-Za-z0-9]/g, '-');
}

/** The region in a Bedrock ARN (`arn:aws:bedrock:<region>:…`), or null for a plain model id. */
export function regionOfArn(value: string): string | null {
  const match = /^arn:aws[a-z-]*:bedrock:([a-z0-9-]+):/.exec(value);
  return match?.[1] ?? null;
}

/** A job's id: the last segment of its ARN (the folder Bedrock writes its output under). */
export function jobIdOfArn(jobArn: string): string {
  return jobArn.slice(jobArn.lastIndexOf('/') + 1);
}
