/**
 * A local emulator of the AWS Bedrock batch inference control plane (model invocation jobs), for
 * tests of barge's Bedrock adapter: `BedrockClient` with `endpoint` set to `url`. Wire formats follow
 * ../shared/spec/providers.md §2 and `@aws-sdk/client-bedrock` (restJson1; errors as JSON
 * `{message}` with `x-amzn-errortype`, so the SDK raises the modelled exception class);
 * test/providers/bedrock-emulator.test.ts checks it with that SDK. Jobs read their input from and
 * write their output to a real S3 server (s3-server.ts); that part lives in bedrock-emulator-output.ts.
 *
 * It checks what the real API checks, when the real API checks it: a SigV4 `authorization` header
 * from a known access key id, scoped to service `bedrock` (403 otherwise; signatures are not
 * recomputed). The region is taken from the credential scope: jobs belong to the region their create
 * was signed for (in their ARN and `job.region`); a call signed for another region does not see them.
 * The create body (jobName, roleArn, modelId, s3 URIs, timeout, token patterns; a model ARN of another
 * region; a job name already used) with a synchronous 400 ValidationException; a reused
 * `clientRequestToken` returns the first job's ARN; a create while `maxJobsInProgress` jobs of that
 * model are unfinished in the region is a ServiceQuotaExceededException. Input is read only while the job
 * validates: unreadable input, a bad line or a record count outside min/max make the job `Failed`
 * with a message, never a 400. Each `modelInput` is checked (Anthropic body: `anthropic_version`,
 * `max_tokens`, `messages`, no `model`) only when processed: a bad one is an errored output line.
 *
 * Jobs walk Submitted → Validating → Scheduled → InProgress → Completed, or end PartiallyCompleted,
 * Failed, Expired, Stopping → Stopped. Test controls: `advance` (one step), `finish` (to a chosen
 * end), `stepEveryGets`, a clock past `submitTime + timeoutDurationInHours` (not started: Expired;
 * started: PartiallyCompleted), per recordId outcomes (`setOutcome` or the `outcome` option),
 * `roleCanAccess`, and `faults` (429/5xx, held calls, 404 after create). A job that ends early
 * (PartiallyCompleted, or Stopped after it started) has processed only the records with an explicit
 * outcome; the others are absent from the output. Output lines are shuffled.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { S3Client } from '@aws-sdk/client-s3';
import {
  type BedrockOutcome,
  bareModelId,
  type InputRecord,
  type Manifest,
  manifestOf,
  type OutputLine,
  outputLine,
  parseS3Uri,
  readInput,
  S3_URI,
  writeOutput,
} from './bedrock-emulator-output.js';
import {
  EXTRA_FIELD,
  HttpError,
  type LoggedRequest,
  type ProviderDialect,
  type Route,
  randomId,
  seededRandom,
  startEmulatorServer,
} from './emulator-http.js';
import { SERVICE_CREDENTIALS } from './s3-server.js';

export type { BedrockOutcome, InputRecord, Manifest } from './bedrock-emulator-output.js';

export const JOB_STATUSES = [
  'Submitted',
  'Validating',
  'Scheduled',
  'InProgress',
  'Completed',
  'PartiallyCompleted',
  'Failed',
  'Stopping',
  'Stopped',
  'Expired',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
const UNFINISHED: readonly JobStatus[] = ['Submitted', 'Validating', 'Scheduled', 'InProgress', 'Stopping'];
/** The ends `finish` can choose. */
export type JobEnd = 'Completed' | 'PartiallyCompleted' | 'Failed' | 'Stopped' | 'Expired';

export interface BedrockEmulatorOptions {
  /** The S3 server jobs read input from and write output to (s3-server.ts `url`). */
  s3Endpoint: string;
  /** Access key ids the emulator accepts in the SigV4 credential scope. */
  accessKeyIds?: string[];
  /** The 12-digit account in job ARNs. */
  accountId?: string;
  /** Record quotas checked while a job validates (commonly quoted defaults, providers.md §2.7). */
  minRecords?: number;
  maxRecords?: number;
  maxRecordsPerFile?: number;
  /** Unfinished jobs allowed per region and model ("Sum of in-progress and submitted batch inference jobs"). */
  maxJobsInProgress?: number;
  /** Milliseconds since the epoch; drives submitTime and timeouts. */
  clock?: () => number;
  /** A job takes one status step by itself on every Nth Get of it (0: only `advance`/`finish`). */
  stepEveryGets?: number;
  /** Decides a record's outcome when no `setOutcome` applies (undefined: the default). */
  outcome?: (record: InputRecord) => BedrockOutcome | undefined;
  /** Whether the job's service role may use a bucket (checked for input and output while validating). */
  roleCanAccess?: (bucket: string, roleArn: string) => boolean;
  /** Seed of the output shuffle. */
  seed?: number;
}

export interface BedrockJob {
  /** The 12-character last segment of the ARN (the output folder name). */
  id: string;
  arn: string;
  /** The region the create call was signed for. */
  region: string;
  name: string;
  modelId: string;
  roleArn: string;
  clientRequestToken: string;
  modelInvocationType: string | undefined;
  inputDataConfig: { s3InputDataConfig: { s3Uri: string } & Record<string, unknown> };
  outputDataConfig: { s3OutputDataConfig: { s3Uri: string } & Record<string, unknown> };
  vpcConfig: unknown;
  tags: unknown;
  timeoutHours: number;
  status: JobStatus;
  message: string | undefined;
  submitTime: number;
  lastModifiedTime: number;
  endTime: number | undefined;
  /** True once the job reached InProgress (a stop or timeout then keeps what was processed). */
  started: boolean;
  /** Known once validated: the input objects (key order) and their records (file order). */
  inputKeys: string[];
  records: InputRecord[] | null;
  /** Known once ended with output: the lines written, the manifest and the object keys. */
  output: OutputLine[] | null;
  manifest: Manifest | null;
  outputKeys: string[];
  gets: number;
  seq: number;
}

/** One call as the emulator understood its signature (from `log`). */
export interface BedrockCall {
  operation: string;
  method: string;
  path: string;
  region: string | undefined;
  accessKeyId: string | undefined;
  status: number | undefined;
}

const JOB_NAME = /^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9+\-.]){0,63}$/;
const ROLE_ARN = /^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role\/.+$/;
const TOKEN = /^[a-zA-Z0-9]{1,256}(-*[a-zA-Z0-9]){0,256}$/;
const JOB_IDENTIFIER =
  /^(?:arn:aws(?:-[^:]+)?:bedrock:([a-z0-9-]{1,20}):([0-9]{12}):model-invocation-job\/)?([a-z0-9]{12})$/;
const MODEL_ARN_REGION = /^arn:aws(?:-[^:]+)?:bedrock:([a-z0-9-]{1,20}):/;
const CREDENTIAL = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,/;
const HOUR_MS = 60 * 60 * 1000;
// The API pages found give no default when the field is absent; the emulator assumes the maximum.
const DEFAULT_TIMEOUT_HOURS = 168;
const ERROR_CODES: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};
const OPERATIONS: Array<[string, RegExp, string]> = [
  ['POST', /^\/model-invocation-job$/, 'CreateModelInvocationJob'],
  ['GET', /^\/model-invocation-job\/[^/]+$/, 'GetModelInvocationJob'],
  ['GET', /^\/model-invocation-jobs$/, 'ListModelInvocationJobs'],
  ['POST', /^\/model-invocation-job\/[^/]+\/stop$/, 'StopModelInvocationJob'],
];

/** The Bedrock error the SDK maps to `code`'s exception class. */
export const awsError = (status: number, code: string, message: string) =>
  new HttpError(status, { message }, { 'x-amzn-errortype': code });
const invalid = (message: string) => awsError(400, 'ValidationException', message);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The SigV4 credential scope of a request, if it has one. */
export function signingOf(headers: IncomingHttpHeaders) {
  const match = CREDENTIAL.exec(headers.authorization ?? '');
  if (!match) return undefined;
  const [, accessKeyId, date, region, service] = match as unknown as [string, string, string, string, string];
  return { accessKeyId, date, region, service };
}

export async function startBedrockEmulator(options: BedrockEmulatorOptions) {
  const accessKeyIds = options.accessKeyIds ?? [SERVICE_CREDENTIALS.accessKeyId];
  const accountId = options.accountId ?? '123456789012';
  const limits = {
    minRecords: options.minRecords ?? 100,
    maxRecords: options.maxRecords ?? 50_000,
    maxRecordsPerFile: options.maxRecordsPerFile ?? options.maxRecords ?? 50_000,
  };
  const maxJobsInProgress = options.maxJobsInProgress ?? 10;
  const clock = options.clock ?? Date.now;
  const random = seededRandom(options.seed ?? 1);
  const s3 = new S3Client({
    region: 'us-east-1',
    endpoint: options.s3Endpoint,
    forcePathStyle: true,
    credentials: SERVICE_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const jobs = new Map<string, BedrockJob>();
  const outcomes = new Map<string, BedrockOutcome>();
  const chosenOutcome = (record: InputRecord) => outcomes.get(record.recordId) ?? options.outcome?.(record);
  let created = 0;

  const dialect: ProviderDialect = {
    // Errors the shared server raises itself (injected faults, unknown paths) cannot set headers;
    // their code rides in `__type`, which the SDK reads when `x-amzn-errortype` is absent.
    errorBody: (status, message) => ({ message, __type: ERROR_CODES[status] ?? 'InternalServerException' }),
    maxBodyBytes: 1024 * 1024,
    tooLarge: () => invalid('Request body too large'),
    responseHeaders: () => ({ 'x-amzn-requestid': randomUUID() }),
    checkHeaders(headers) {
      const scope = signingOf(headers);
      if (!headers.authorization) {
        throw awsError(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
      }
      if (!scope || !accessKeyIds.includes(scope.accessKeyId)) {
        throw awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
      }
      if (scope.service !== 'bedrock') {
        throw awsError(403, 'InvalidSignatureException', "Credential should be scoped to correct service: 'bedrock'.");
      }
    },
  };
  const regionOf = (headers: IncomingHttpHeaders) => signingOf(headers)?.region as string;

  /** The job an identifier (ARN, percent-decoded, or bare id) names, seen from `region`. */
  function find(identifier: string, region: string): BedrockJob {
    const match = JOB_IDENTIFIER.exec(identifier);
    if (!match)
      throwViolations([
        violation('jobIdentifier', identifier, `must satisfy regular expression pattern: ${JOB_IDENTIFIER.source}`),
      ]);
    const [, arnRegion, arnAccount, id] = match as RegExpExecArray;
    const job = jobs.get(id as string);
    const elsewhere = (arnRegion !== undefined && arnRegion !== region) || (arnAccount ?? accountId) !== accountId;
    if (!job || job.region !== region || elsewhere) {
      throw awsError(404, 'ResourceNotFoundException', `The model invocation job ${identifier} could not be found.`);
    }
    return job;
  }

  function view(job: BedrockJob) {
    const validated = job.records !== null;
    return {
      jobArn: job.arn,
      jobName: job.name,
      modelId: job.modelId,
      clientRequestToken: job.clientRequestToken,
      roleArn: job.roleArn,
      status: job.status,
      message: job.message,
      submitTime: iso(job.submitTime),
      lastModifiedTime: iso(job.lastModifiedTime),
      endTime: iso(job.endTime),
      inputDataConfig: job.inputDataConfig,
      outputDataConfig: job.outputDataConfig,
      vpcConfig: job.vpcConfig,
      timeoutDurationInHours: job.timeoutHours,
      jobExpirationTime: iso(job.submitTime + job.timeoutHours * HOUR_MS),
      modelInvocationType: job.modelInvocationType,
      // Zero while validating (field-notes.md §3.1); the processed counts move only at the end here.
      totalRecordCount: validated ? job.records?.length : 0,
      processedRecordCount: job.manifest?.processedRecordCount ?? 0,
      successRecordCount: job.manifest?.successRecordCount ?? 0,
      errorRecordCount: job.manifest?.errorRecordCount ?? 0,
      ...EXTRA_FIELD,
    };
  }

  function create(body: unknown, region: string): BedrockJob {
    const given = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    checkCreate(given);
    const mine = [...jobs.values()].filter((job) => job.region === region);
    // "If this token matches a previous request, Amazon Bedrock ignores the request, but does not return an error."
    const token = given.clientRequestToken as string | undefined;
    const same = token === undefined ? undefined : mine.find((job) => job.clientRequestToken === token);
    if (same) return same;
    const modelId = given.modelId as string;
    const modelRegion = MODEL_ARN_REGION.exec(modelId)?.[1];
    if (modelRegion !== undefined && modelRegion !== region) {
      throw invalid(`The model ${modelId} is in region ${modelRegion}, but the request was sent to ${region}.`);
    }
    const name = given.jobName as string;
    if (mine.some((job) => job.name === name)) {
      throw invalid(`A model invocation job named ${name} already exists. Use a unique job name.`);
    }
    const model = bareModelId(modelId);
    const running = mine.filter((job) => bareModelId(job.modelId) === model && UNFINISHED.includes(job.status));
    if (running.length >= maxJobsInProgress) {
      throw awsError(
        400,
        'ServiceQuotaExceededException',
        `You have reached the limit of ${maxJobsInProgress} in-progress and submitted batch inference jobs for model ${model}.`,
      );
    }
    const now = clock();
    const id = randomId('', 12, 'base62').toLowerCase();
    const job: BedrockJob = {
      id,
      arn: `arn:aws:bedrock:${region}:${accountId}:model-invocation-job/${id}`,
      region,
      name,
      modelId,
      roleArn: given.roleArn as string,
      clientRequestToken: token ?? randomUUID(),
      modelInvocationType: given.modelInvocationType as string | undefined,
      inputDataConfig: given.inputDataConfig as BedrockJob['inputDataConfig'],
      outputDataConfig: given.outputDataConfig as BedrockJob['outputDataConfig'],
      vpcConfig: given.vpcConfig,
      tags: given.tags,
      timeoutHours: (given.timeoutDurationInHours as number | undefined) ?? DEFAULT_TIMEOUT_HOURS,
      status: 'Submitted',
      message: undefined,
      submitTime: now,
      lastModifiedTime: now,
      endTime: undefined,
      started: false,
      inputKeys: [],
      records: null,
      output: null,
      manifest: null,
      outputKeys: [],
      gets: 0,
      seq: created++,
    };
    jobs.set(id, job);
    server.faults.batchCreated(id);
    return job;
  }

  function moveTo(job: BedrockJob, status: JobStatus, message?: string): void {
    job.status = status;
    job.lastModifiedTime = clock();
    if (message !== undefined) job.message = message;
    if (!UNFINISHED.includes(status)) job.endTime = job.lastModifiedTime;
    if (status === 'InProgress') job.started = true;
  }

  async function validate(job: BedrockJob): Promise<void> {
    const inputUri = job.inputDataConfig.s3InputDataConfig.s3Uri;
    for (const uri of [inputUri, job.outputDataConfig.s3OutputDataConfig.s3Uri]) {
      const { bucket } = parseS3Uri(uri);
      if (options.roleCanAccess && !options.roleCanAccess(bucket, job.roleArn)) {
        return moveTo(
          job,
          'Failed',
          `Access denied: the service role ${job.roleArn} cannot access s3://${bucket}. Check that the role allows s3:GetObject, s3:PutObject and s3:ListBucket on the bucket and that Amazon Bedrock can assume it.`,
        );
      }
    }
    const read = await readInput(s3, inputUri, limits);
    if ('failure' in read) return moveTo(job, 'Failed', read.failure);
    job.records = read.records;
    job.inputKeys = read.keys;
    moveTo(job, 'Scheduled');
  }

  /** Ends a job; Completed processes every record, an early end only those with an explicit outcome. */
  async function end(job: BedrockJob, status: 'Completed' | 'PartiallyCompleted' | 'Stopped'): Promise<void> {
    if (!job.started || !job.records) return moveTo(job, status);
    const lines: OutputLine[] = [];
    for (const record of job.records) {
      const outcome = chosenOutcome(record) ?? (status === 'Completed' ? { type: 'succeeded' as const } : undefined);
      if (outcome) lines.push(outputLine(record, outcome, job.modelId));
    }
    const manifest = manifestOf(job.records.length, lines);
    const target = {
      outputS3Uri: job.outputDataConfig.s3OutputDataConfig.s3Uri,
      jobId: job.id,
      inputKeys: job.inputKeys,
      manifest,
    };
    try {
      job.outputKeys = await writeOutput(s3, target, lines, random);
    } catch (err) {
      return moveTo(job, 'Failed', `Amazon Bedrock could not write the output: ${(err as Error).name}.`);
    }
    job.output = lines;
    job.manifest = manifest;
    moveTo(job, status);
  }

  async function step(job: BedrockJob): Promise<void> {
    switch (job.status) {
      case 'Submitted':
        return moveTo(job, 'Validating');
      case 'Validating':
        return validate(job);
      case 'Scheduled':
        return moveTo(job, 'InProgress');
      case 'InProgress':
        return end(job, 'Completed');
      case 'Stopping':
        return end(job, 'Stopped');
      default:
        return;
    }
  }

  /** Past `submitTime + timeout`: a job that never started expires, a running one ends partially. */
  async function checkTimeout(job: BedrockJob): Promise<void> {
    if (!UNFINISHED.includes(job.status) || clock() < job.submitTime + job.timeoutHours * HOUR_MS) return;
    if (job.status === 'Stopping') return end(job, 'Stopped');
    if (job.started) return end(job, 'PartiallyCompleted');
    moveTo(job, 'Expired');
  }

  async function finish(job: BedrockJob, to: JobEnd, message?: string): Promise<void> {
    const walkWhile = async (statuses: JobStatus[]) => {
      while (statuses.includes(job.status)) await step(job);
    };
    if (!UNFINISHED.includes(job.status)) return;
    switch (to) {
      case 'Completed':
        return walkWhile([...UNFINISHED]);
      case 'PartiallyCompleted':
        await walkWhile(['Submitted', 'Validating', 'Scheduled']);
        if (job.status === 'InProgress') return end(job, 'PartiallyCompleted');
        return walkWhile(['Stopping']);
      case 'Expired':
        if (job.started) throw new Error(`job ${job.id} has started; it can end PartiallyCompleted, not Expired`);
        await walkWhile(['Submitted', 'Validating']);
        if (job.status === 'Scheduled') moveTo(job, 'Expired');
        return walkWhile(['Stopping']);
      case 'Stopped':
        moveTo(job, 'Stopping');
        return end(job, 'Stopped');
      case 'Failed':
        return moveTo(job, 'Failed', message ?? 'Internal server error.');
    }
  }

  // One state change at a time per job: the SDK may poll while a test advances the same job.
  const queues = new Map<string, Promise<unknown>>();
  function serially<T>(job: BedrockJob, work: () => Promise<T>): Promise<T> {
    const next = (queues.get(job.id) ?? Promise.resolve()).then(work);
    queues.set(
      job.id,
      next.catch(() => undefined),
    );
    return next;
  }

  function stop(job: BedrockJob): void {
    if (job.status === 'Stopping') return;
    if (!UNFINISHED.includes(job.status)) {
      throw awsError(400, 'ConflictException', `The job ${job.arn} has already ended with status ${job.status}.`);
    }
    moveTo(job, 'Stopping');
  }

  async function list(query: Record<string, string>, region: string) {
    const { maxResults, status, order, after, before } = listQuery(query);
    const mine = [...jobs.values()].filter((job) => job.region === region);
    for (const job of mine) await serially(job, () => checkTimeout(job));
    const matching = mine
      .filter(
        (job) =>
          (status === undefined || job.status === status) &&
          (query.nameContains === undefined || job.name.includes(query.nameContains)) &&
          (after === undefined || job.submitTime > after) &&
          (before === undefined || job.submitTime < before),
      )
      .sort((a, b) => a.submitTime - b.submitTime || a.seq - b.seq);
    if (order === 'Descending') matching.reverse();
    let start = 0;
    if (query.nextToken !== undefined) {
      const lastArn = Buffer.from(query.nextToken, 'base64url').toString('utf8');
      start = matching.findIndex((job) => job.arn === lastArn) + 1;
      if (start === 0) throw invalid('The provided pagination token is invalid.');
    }
    const page = matching.slice(start, start + maxResults);
    const more = start + maxResults < matching.length;
    const last = page.at(-1);
    return {
      invocationJobSummaries: page.map(view),
      nextToken: more && last ? Buffer.from(last.arn).toString('base64url') : undefined,
    };
  }

  const jobIdOf = (identifier: string) => identifier.slice(identifier.lastIndexOf('/') + 1);
  const routes: Route[] = [
    {
      method: 'POST',
      path: /^\/model-invocation-job$/,
      handle: ({ body, headers }) => ({ json: { jobArn: create(body, regionOf(headers)).arn } }),
    },
    {
      method: 'GET',
      path: /^\/model-invocation-jobs$/,
      body: 'none',
      handle: async ({ query, headers }) => ({ json: await list(query, regionOf(headers)) }),
    },
    {
      method: 'GET',
      path: /^\/model-invocation-job\/([^/]+)$/,
      body: 'none',
      readsBatch: ([identifier]) => jobIdOf(identifier as string),
      handle: async ({ params: [identifier], headers }) => {
        const job = find(identifier as string, regionOf(headers));
        await serially(job, async () => {
          job.gets++;
          await checkTimeout(job);
          const every = options.stepEveryGets ?? 0;
          if (every > 0 && job.gets % every === 0) await step(job);
        });
        return { json: view(job) };
      },
    },
    {
      method: 'POST',
      path: /^\/model-invocation-job\/([^/]+)\/stop$/,
      body: 'none',
      readsBatch: ([identifier]) => jobIdOf(identifier as string),
      handle: async ({ params: [identifier], headers }) => {
        const job = find(identifier as string, regionOf(headers));
        await serially(job, async () => {
          await checkTimeout(job);
          stop(job);
        });
        return { json: {} };
      },
    },
  ];

  const server = await startEmulatorServer(dialect, routes);

  /** The jobs a control names: one (by id or ARN), or every unfinished one. */
  function selected(jobId: string | undefined): BedrockJob[] {
    if (jobId === undefined) return [...jobs.values()].filter((job) => UNFINISHED.includes(job.status));
    const job = jobs.get(jobIdOf(jobId));
    if (!job) throw new Error(`no Bedrock job ${jobId}`);
    return [job];
  }

  return {
    /** The `endpoint` for BedrockClient. */
    url: server.url,
    accountId,
    /** Every request received, in order (method, path, query, headers, parsed body, status). */
    log: server.log,
    faults: server.faults,
    /** The log read as Bedrock operations, with the region and key each call was signed with. */
    calls: (): BedrockCall[] => server.log.map(callOf),
    /** Holds the next create call open (see Faults.holdNext). */
    holdNextCreate: (apply?: 'on-arrival' | 'on-release') =>
      server.faults.holdNext({ method: 'POST', path: /^\/model-invocation-job$/ }, apply),
    /** A job by 12-character id or ARN. */
    job: (idOrArn: string) => jobs.get(jobIdOf(idOrArn)),
    jobs: () => [...jobs.values()],
    setOutcome: (recordId: string, outcome: BedrockOutcome) => void outcomes.set(recordId, outcome),
    /** One status step for a job, or for every unfinished job. */
    advance: async (jobId?: string) => {
      for (const job of selected(jobId)) await serially(job, () => step(job));
    },
    /**
     * Takes a job (or every unfinished one) to an end: Completed (walks every step; validation may
     * fail it), PartiallyCompleted (walks to InProgress, then ends early), Expired (only before
     * InProgress), Stopped (as if stopped now), Failed (with `message`).
     */
    finish: async (jobId?: string, to: JobEnd = 'Completed', message?: string) => {
      for (const job of selected(jobId)) await serially(job, () => finish(job, to, message));
    },
    async close() {
      await server.close();
      s3.destroy();
    },
  };
}

export type BedrockEmulator = Awaited<ReturnType<typeof startBedrockEmulator>>;

/** One constraint violation, worded as the API words them. */
const violation = (field: string, value: unknown, constraint: string) =>
  `Value ${value === undefined || value === null ? 'null' : `'${String(value)}'`} at '${field}' failed to satisfy constraint: Member ${constraint}`;

function throwViolations(problems: string[]): void {
  if (problems.length === 0) return;
  const count = problems.length === 1 ? '1 validation error' : `${problems.length} validation errors`;
  throw invalid(`${count} detected: ${problems.join('; ')}`);
}

/** The create body's constraints (API_CreateModelInvocationJob), all reported at once. */
function checkCreate(body: Record<string, unknown>): void {
  const problems: string[] = [];
  const check = (field: string, value: unknown, ok: boolean, constraint: string) => {
    if (!ok) problems.push(violation(field, value, constraint));
  };
  const string = (field: string, value: unknown, max: number, pattern?: RegExp) => {
    if (typeof value !== 'string') return check(field, value, false, 'must not be null');
    check(field, value, value.length >= 1 && value.length <= max, `must have length between 1 and ${max}`);
    if (pattern) check(field, value, pattern.test(value), `must satisfy regular expression pattern: ${pattern.source}`);
  };
  const oneOf = (field: string, value: unknown, values: string[]) =>
    value === undefined ||
    check(field, value, values.includes(value as string), `must satisfy enum value set: [${values.join(', ')}]`);
  const s3In = (body.inputDataConfig as { s3InputDataConfig?: Record<string, unknown> } | undefined)?.s3InputDataConfig;
  const s3Out = (body.outputDataConfig as { s3OutputDataConfig?: Record<string, unknown> } | undefined)
    ?.s3OutputDataConfig;
  string('jobName', body.jobName, 63, JOB_NAME);
  string('roleArn', body.roleArn, 2048, ROLE_ARN);
  string('modelId', body.modelId, 2048);
  string('inputDataConfig.s3InputDataConfig.s3Uri', s3In?.s3Uri, 1024, S3_URI);
  string('outputDataConfig.s3OutputDataConfig.s3Uri', s3Out?.s3Uri, 1024, S3_URI);
  oneOf('inputDataConfig.s3InputDataConfig.s3InputFormat', s3In?.s3InputFormat, ['JSONL']);
  if (body.clientRequestToken !== undefined) string('clientRequestToken', body.clientRequestToken, 256, TOKEN);
  const hours = body.timeoutDurationInHours as number | undefined;
  if (hours !== undefined) {
    check(
      'timeoutDurationInHours',
      hours,
      Number.isInteger(hours) && hours >= 24,
      'must have value greater than or equal to 24',
    );
    check(
      'timeoutDurationInHours',
      hours,
      Number.isInteger(hours) && hours <= 168,
      'must have value less than or equal to 168',
    );
  }
  oneOf('modelInvocationType', body.modelInvocationType, ['InvokeModel', 'Converse']);
  throwViolations(problems);
  // Records are checked as Anthropic InvokeModel bodies only; a Converse job would be misjudged.
  if (body.modelInvocationType === 'Converse') {
    throw invalid('This emulator takes modelInvocationType InvokeModel only, not Converse.');
  }
}

/** The list query's filters (API_ListModelInvocationJobs); newest first unless asked otherwise. */
function listQuery(query: Record<string, string>) {
  const problems: string[] = [];
  const maxResults = query.maxResults === undefined ? 1000 : Number(query.maxResults);
  if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > 1000) {
    problems.push(violation('maxResults', query.maxResults, 'must have value between 1 and 1000'));
  }
  const oneOf = (field: string, values: readonly string[]) => {
    const value = query[field];
    if (value !== undefined && !values.includes(value)) {
      problems.push(violation(field, value, `must satisfy enum value set: [${values.join(', ')}]`));
    }
  };
  oneOf('statusEquals', JOB_STATUSES);
  oneOf('sortBy', ['CreationTime']);
  oneOf('sortOrder', ['Ascending', 'Descending']);
  const time = (field: string) => {
    const ms = query[field] === undefined ? undefined : Date.parse(query[field]);
    if (Number.isNaN(ms)) problems.push(violation(field, query[field], 'must be a timestamp'));
    return ms;
  };
  const after = time('submitTimeAfter');
  const before = time('submitTimeBefore');
  throwViolations(problems);
  const order = query.sortOrder === 'Ascending' ? 'Ascending' : 'Descending';
  return { maxResults, status: query.statusEquals, order, after, before };
}

function callOf(entry: LoggedRequest): BedrockCall {
  const scope = signingOf(entry.headers);
  const operation = OPERATIONS.find(([method, path]) => method === entry.method && path.test(entry.path))?.[2];
  return {
    operation: operation ?? 'Unknown',
    method: entry.method,
    path: entry.path,
    region: scope?.region,
    accessKeyId: scope?.accessKeyId,
    status: entry.status,
  };
}
