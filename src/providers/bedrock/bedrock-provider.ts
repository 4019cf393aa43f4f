/**
 * The AWS Bedrock batch inference adapter (model invocation jobs, providers.md §2) over the official
 * `@aws-sdk/client-bedrock` and `@aws-sdk/client-s3`: stages the batch's input JSONL under
 * BARGE_BEDROCK_S3_URI, creates a job that Bedrock runs as BARGE_BEDROCK_ROLE_ARN, polls it, streams
 * the output files back as results, stops it to cancel and deletes the staged input when it has
 * ended. docs/providers.md ("AWS Bedrock") describes the whole.
 */
import { Readable } from 'node:stream';
import {
  BedrockClient,
  CreateModelInvocationJobCommand,
  GetModelInvocationJobCommand,
  type GetModelInvocationJobCommandOutput,
  ListModelInvocationJobsCommand,
  StopModelInvocationJobCommand,
} from '@aws-sdk/client-bedrock';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Clock } from '../../domain/clock.js';
import {
  CHECK_TIMEOUT_MS,
  checkCapability,
  type FoundJob,
  type JobRef,
  type JobStatus,
  justCreated,
  type Provider,
  type ProviderCapability,
  ProviderError,
  type ProviderLimits,
  providerCall,
  providerStream,
  type RequestResult,
  type SubmissionLookup,
  type SubmitInput,
  type SubmitStep,
  uploadFrom,
} from '../provider.js';
import { inputFileChunks } from './input-file.js';
import {
  type BedrockJobState,
  jobIdOfArn,
  jobNameOf,
  jobStateText,
  parseJobState,
  regionOfArn,
  requestTokenOf,
  s3Location,
  stagingFor,
} from './job-state.js';
import { outputFolder, outputKeys, outputLines, processedRecordCount, resultOfLine } from './output-files.js';
import { providerErrorOf } from './provider-errors.js';

/** "Batch inference input file size": 1 GB, not adjustable (providers.md §2.7). */
const BEDROCK_MAX_FILE_BYTES = 1024 * 1024 * 1024;
/**
 * What a line adds to a stored input: `{"recordId":"<11>","modelInput":{"anthropic_version":…,`
 * and `}}\n`, under this many bytes. The batcher packs by stored bytes, so it is given the file
 * limit less this much for a full job.
 */
const LINE_ENVELOPE_BYTES = 128;
/**
 * Bedrock ends a job this many hours after it was submitted (the smallest timeout it takes): the
 * batch window barge promises. What ran is kept (PartiallyCompleted), what never started expires.
 */
const TIMEOUT_HOURS = 24;
/**
 * Statuses in which a job no longer runs and has what output it will have, and what a request with
 * no output line became: out of time (PartiallyCompleted; Expired never started), or stopped.
 */
const ENDED: Record<string, JobStatus> = {
  Completed: { state: 'ended' },
  PartiallyCompleted: { state: 'ended', unanswered: 'expired' },
  Expired: { state: 'ended', unanswered: 'expired' },
  Stopped: { state: 'ended', unanswered: 'canceled' },
};
/** Nothing left to stop. */
const STOPPED = new Set(['Stopping', 'Failed', ...Object.keys(ENDED)]);

export interface BedrockProviderOptions {
  /** BARGE_BEDROCK_ROLE_ARN: the service role Bedrock assumes to read the input and write the output. */
  roleArn: string;
  /** BARGE_BEDROCK_S3_URI: `s3://bucket/prefix/`, where input is staged and output written. */
  s3Uri: string;
  /** BARGE_BEDROCK_REGION; a model ARN's own region wins for its jobs. */
  region: string;
  /** BARGE_AWS_BEDROCK_ENDPOINT (tests); null: AWS's endpoint for each region. */
  endpoint: string | null;
  /** BARGE_AWS_S3_ENDPOINT and BARGE_AWS_S3_FORCE_PATH_STYLE, as for object delivery. */
  s3Endpoint: string | null;
  forcePathStyle: boolean;
  /** The service's own AWS credentials; null: the standard AWS credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
  /** BARGE_BEDROCK_MIN_RECORDS, BARGE_BEDROCK_MAX_RECORDS, BARGE_BEDROCK_MAX_JOBS. */
  minRecords: number;
  maxRecords: number;
  maxJobs: number;
  clock: Clock;
  limits?: Partial<ProviderLimits>;
}

/**
 * The SDK clients never retry (`maxAttempts: 1`): the pipeline owns retries. A create is safe to
 * repeat anyway, as its client request token is derived from the batch id.
 */
export class BedrockProvider implements Provider {
  readonly name = 'bedrock';
  readonly limits: ProviderLimits;
  private readonly s3: S3Client;
  private readonly clients = new Map<string, BedrockClient>();

  constructor(private readonly options: BedrockProviderOptions) {
    this.limits = {
      maxRequests: options.maxRecords,
      maxBytes: BEDROCK_MAX_FILE_BYTES - options.maxRecords * LINE_ENVELOPE_BYTES,
      minRequests: options.minRecords,
      // Bedrock ends the job itself at its timeout; barge's own deadline is a backstop after it.
      completionWindowMs: TIMEOUT_HOURS * 3_600_000 + 3_600_000,
      // A job takes hours and the account runs few at once (maxJobs): fill jobs for longer, so
      // fewer of them run and fewer need padding to Bedrock's minimum.
      defaultMaxWaitMs: 5 * 60_000,
      maxJobsInProgress: options.maxJobs,
      ...options.limits,
    };
    this.s3 = new S3Client({
      region: options.region,
      maxAttempts: 1,
      forcePathStyle: options.forcePathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(options.s3Endpoint ? { endpoint: options.s3Endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
  }

  /**
   * Two steps, each persisted before the next: stage the input file (state: where it is, and the
   * region the job runs in), then create the job from it. A retried create reuses the staged file
   * and the same client request token, so it names the job the first create made, if it did.
   */
  async submit(input: SubmitInput): Promise<SubmitStep> {
    const staged = parseJobState(input.state);
    if (!staged) {
      const staging = stagingFor(this.options.s3Uri, input.batchId, regionOfArn(input.model) ?? this.options.region);
      await this.stage(staging, input);
      return { kind: 'progress', state: jobStateText(staging) };
    }
    const created = await this.call(`creating the job of batch ${input.batchId}`, () =>
      this.bedrock(staged.region).send(
        new CreateModelInvocationJobCommand({
          jobName: jobNameOf(input.batchId),
          clientRequestToken: requestTokenOf(input.batchId),
          roleArn: this.options.roleArn,
          modelId: input.model,
          inputDataConfig: { s3InputDataConfig: { s3Uri: staged.inputUri, s3InputFormat: 'JSONL' } },
          outputDataConfig: { s3OutputDataConfig: { s3Uri: staged.outputUri } },
          timeoutDurationInHours: TIMEOUT_HOURS,
        }),
        { abortSignal: input.signal },
      ),
    );
    if (!created.jobArn) throw new ProviderError('retryable', 'Bedrock accepted the job without naming it');
    return { kind: 'submitted', jobId: created.jobArn, state: jobStateText(staged) };
  }

  /** Streams the JSONL to S3 as it is produced (lib-storage: multipart past one part), never whole. */
  private async stage(staging: BedrockJobState, input: SubmitInput): Promise<void> {
    const { bucket, key } = s3Location(staging.inputUri);
    await uploadFrom(
      inputFileChunks(input.requests, BEDROCK_MAX_FILE_BYTES),
      (body) => {
        const upload = new Upload({
          client: this.s3,
          params: { Bucket: bucket, Key: key, Body: Readable.from(body), ContentType: 'application/jsonl' },
          queueSize: 1,
        });
        input.signal?.addEventListener('abort', () => void upload.abort().catch(() => {}), { once: true });
        return upload.done();
      },
      (err) => providerErrorOf(err, `staging the input of batch ${input.batchId} at ${staging.inputUri}`),
    );
  }

  /**
   * The job a lost create made, found by the name derived from the batch id (exact: Bedrock job
   * names are unique in an account). Nothing is created before the input is staged and its state
   * persisted, so without that state there is nothing to find.
   */
  async findSubmitted(lookup: SubmissionLookup, abortSignal?: AbortSignal): Promise<FoundJob[]> {
    const staged = parseJobState(lookup.state);
    if (!staged) return [];
    const jobName = jobNameOf(lookup.batchId);
    const listed = await this.call(`looking for the job of batch ${lookup.batchId}`, () =>
      this.bedrock(staged.region).send(new ListModelInvocationJobsCommand({ nameContains: jobName, maxResults: 100 }), {
        abortSignal,
      }),
    );
    return (listed.invocationJobSummaries ?? [])
      .filter((job) => job.jobName === jobName && job.jobArn)
      .map((job) => ({ jobId: job.jobArn as string, state: lookup.state, match: 'exact' as const }));
  }

  /**
   * Submitted, Validating, Scheduled, InProgress and Stopping are running; Completed,
   * PartiallyCompleted, Stopped and Expired have ended (ENDED); Failed failed as a whole, with
   * Bedrock's message (e.g. the role could not read the input).
   */
  async status(job: JobRef, abortSignal?: AbortSignal): Promise<JobStatus> {
    const described = await this.describe(job, abortSignal);
    if (described.status === 'Failed') {
      return { state: 'failed', message: described.message || 'Bedrock failed the job without saying why' };
    }
    const ended = ENDED[described.status ?? ''];
    if (ended) return ended;
    return { state: 'running', expectedEndAt: null };
  }

  /**
   * The output lines, each mapped back to its custom id by position (record-ids.ts). What has no
   * line becomes what status() said (`unanswered`). The manifest's count of processed records is
   * checked against the lines read, so a listing that does not yet show every output file is read
   * again later instead of failing requests that have results.
   */
  async *results(job: JobRef, abortSignal?: AbortSignal): AsyncIterable<RequestResult> {
    const staged = parseJobState(job.state);
    if (!staged) throw new ProviderError('rejected', `the job ${job.jobId} has no recorded staging location`);
    const customIds: string[] = [];
    for await (const customId of job.customIds()) customIds.push(customId);
    const folder = outputFolder(staged.outputUri, jobIdOfArn(job.jobId));
    const reading = `reading the output of job ${job.jobId}`;
    const processed = await this.call(reading, () => processedRecordCount(this.s3, folder, abortSignal));
    let lines = 0;
    for (const key of await this.call(reading, () => outputKeys(this.s3, folder, abortSignal))) {
      const fileLines = providerStream(outputLines(this.s3, folder.bucket, key, abortSignal), (err) =>
        providerErrorOf(err, reading),
      );
      for await (const line of fileLines) {
        lines++;
        const result = resultOfLine(line, customIds);
        if (result) yield result;
      }
    }
    if (processed !== null && lines < processed) {
      throw new ProviderError(
        'retryable',
        `${reading}: the manifest counts ${processed} processed records, the output files hold ${lines}`,
      );
    }
  }

  /** Asks Bedrock to stop the job; a job already stopping or ended is not an error. */
  async cancel(job: JobRef, abortSignal?: AbortSignal): Promise<void> {
    try {
      await this.bedrock(regionOf(job)).send(new StopModelInvocationJobCommand({ jobIdentifier: job.jobId }), {
        abortSignal,
      });
    } catch (err) {
      const refused = providerErrorOf(err, `stopping job ${job.jobId}`, justCreated(job, this.options.clock.now()));
      if (refused.kind !== 'rejected') throw refused;
      const described = await this.describe(job, abortSignal);
      if (!STOPPED.has(described.status ?? '')) throw refused;
    }
  }

  /** Deletes the staged input; the output stays in the operator's bucket (docs/providers.md). */
  async cleanup(job: JobRef, abortSignal?: AbortSignal): Promise<void> {
    const staged = parseJobState(job.state);
    if (!staged) return;
    const { bucket, key } = s3Location(staged.inputUri);
    await this.call(`deleting the staged input ${staged.inputUri}`, () =>
      this.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal }),
    );
  }

  /**
   * Lists jobs (limit 1) in BARGE_BEDROCK_REGION, then writes and deletes a small object under the
   * staging prefix: what barge's own identity must be able to do. What the service role can do only
   * a job shows (a Failed job names it).
   */
  async check(): Promise<ProviderCapability[]> {
    const { bucket, key } = s3Location(this.options.s3Uri);
    const probeKey = `${key}barge-provider-check-${this.options.clock.now()}.txt`;
    const where = `s3://${bucket}/${probeKey}`;
    const region = this.options.region;
    const send = { abortSignal: AbortSignal.timeout(CHECK_TIMEOUT_MS) };
    const probe = (name: string, run: () => Promise<string>) =>
      checkCapability(name, run, (err) => providerErrorOf(err, name));
    return [
      await probe('list model invocation jobs', async () => {
        const listed = await this.bedrock(region).send(new ListModelInvocationJobsCommand({ maxResults: 1 }), send);
        return `listed jobs in ${region} (${listed.invocationJobSummaries?.length ?? 0} seen)`;
      }),
      await probe('write to the staging prefix', async () => {
        await this.s3.send(
          new PutObjectCommand({ Bucket: bucket, Key: probeKey, Body: 'barge provider check\n' }),
          send,
        );
        return `wrote ${where}`;
      }),
      await probe('delete from the staging prefix', async () => {
        await this.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: probeKey }), send);
        return `deleted ${where}`;
      }),
    ];
  }

  private describe(job: JobRef, abortSignal?: AbortSignal): Promise<GetModelInvocationJobCommandOutput> {
    return this.call(
      `reading job ${job.jobId}`,
      () =>
        this.bedrock(regionOf(job)).send(new GetModelInvocationJobCommand({ jobIdentifier: job.jobId }), {
          abortSignal,
        }),
      justCreated(job, this.options.clock.now()),
    );
  }

  /** One client per region: a model ARN's region wins over BARGE_BEDROCK_REGION for its jobs. */
  private bedrock(region: string): BedrockClient {
    let client = this.clients.get(region);
    if (!client) {
      client = new BedrockClient({
        region,
        maxAttempts: 1,
        ...(this.options.endpoint ? { endpoint: this.options.endpoint } : {}),
        ...(this.options.credentials ? { credentials: this.options.credentials } : {}),
      });
      this.clients.set(region, client);
    }
    return client;
  }

  private call<T>(what: string, run: () => Promise<T>, jobJustCreated = false): Promise<T> {
    return providerCall(run, (err) => providerErrorOf(err, what, jobJustCreated));
  }
}

/** The region of a job: its ARN's (`arn:aws:bedrock:<region>:…:model-invocation-job/<id>`). */
function regionOf(job: JobRef): string {
  const region = regionOfArn(job.jobId);
  if (!region) throw new ProviderError('rejected', `not a Bedrock job ARN: ${job.jobId}`);
  return region;
}
