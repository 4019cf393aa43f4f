/**
 * Checks the Bedrock batch inference emulator (test/helpers/bedrock-emulator.ts) with the official
 * `@aws-sdk/client-bedrock` and `@aws-sdk/client-s3` against a real S3 server (s3rver): create and
 * its validation, idempotency and quota, every job status, the output objects, list pagination,
 * regions, errors and faults. If the SDK parses what the emulator says, adapter tests against it are
 * meaningful.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  BedrockClient,
  type BedrockClientConfig,
  CreateModelInvocationJobCommand,
  type CreateModelInvocationJobCommandInput,
  GetModelInvocationJobCommand,
  ListModelInvocationJobsCommand,
  paginateListModelInvocationJobs,
  StopModelInvocationJobCommand,
} from '@aws-sdk/client-bedrock';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  type BedrockEmulator,
  type BedrockEmulatorOptions,
  type InputRecord,
  startBedrockEmulator,
} from '../helpers/bedrock-emulator.js';
import { EXTRA_FIELD } from '../helpers/emulator-http.js';
import { type S3Server, SERVICE_CREDENTIALS, startS3Server } from '../helpers/s3-server.js';

const IN = 'barge-batch-in';
const OUT = 'barge-batch-out';
const ROLE = 'arn:aws:iam::123456789012:role/BedrockBatchRole';
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const OUTPUT_URI = `s3://${OUT}/results`;

let s3server: S3Server;
let s3: S3Client;
let emulator: BedrockEmulator;
const extra: BedrockEmulator[] = [];

before(async () => {
  s3server = await startS3Server();
  await s3server.createBucket(IN);
  await s3server.createBucket(OUT);
  s3 = new S3Client({
    region: 'us-east-1',
    endpoint: s3server.url,
    forcePathStyle: true,
    credentials: SERVICE_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  emulator = await startBedrockEmulator({ s3Endpoint: s3server.url });
});
after(async () => {
  for (const other of extra) await other.close();
  await emulator.close();
  s3.destroy();
  await s3server.close();
});

/** Another emulator on the same S3 server, closed after the suite. */
async function startAnother(options: Omit<BedrockEmulatorOptions, 's3Endpoint'>) {
  const other = await startBedrockEmulator({ s3Endpoint: s3server.url, ...options });
  extra.push(other);
  return other;
}

const client = (target: BedrockEmulator = emulator, options: BedrockClientConfig = {}) =>
  new BedrockClient({
    region: 'us-east-1',
    endpoint: target.url,
    credentials: SERVICE_CREDENTIALS,
    maxAttempts: 1,
    ...options,
  });

const modelInput = (text: string, extraFields: Record<string, unknown> = {}) => ({
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 256,
  messages: [{ role: 'user', content: text }],
  ...extraFields,
});

const recordId = (i: number) => String(i).padStart(11, '0');

/** Writes one JSONL input object; returns its s3:// URI. */
async function stage(key: string, lines: unknown[]): Promise<string> {
  const body = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
  await s3.send(new PutObjectCommand({ Bucket: IN, Key: key, Body: body }));
  return `s3://${IN}/${key}`;
}

const records = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ({
    recordId: recordId(from + i),
    modelInput: modelInput(`question ${from + i}`),
  }));

const input = (
  jobName: string,
  inputUri: string,
  more: Partial<CreateModelInvocationJobCommandInput> = {},
): CreateModelInvocationJobCommandInput => ({
  jobName,
  roleArn: ROLE,
  modelId: MODEL,
  inputDataConfig: { s3InputDataConfig: { s3Uri: inputUri } },
  outputDataConfig: { s3OutputDataConfig: { s3Uri: OUTPUT_URI } },
  ...more,
});

const get = (jobIdentifier: string, sdk = client()) => sdk.send(new GetModelInvocationJobCommand({ jobIdentifier }));
const jobIdOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1);

/** The lines of one output object (JSONL). */
async function outputLines(key: string) {
  const object = await s3server.getObject(OUT, key);
  const text = object.body.toString('utf8');
  assert.ok(text.endsWith('}\n') && !text.includes('\n\n'));
  return text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

const outputKeys = async (jobId: string) =>
  (await s3server.keys(OUT)).filter((key) => key.startsWith(`results/${jobId}/`));

/** Asserts the SDK raised `name` with `status`. */
const raises = (name: string, status: number, message?: RegExp) => (err: any) => {
  assert.equal(err.name, name);
  assert.equal(err.$metadata?.httpStatusCode, status);
  if (message) assert.match(err.message, message);
  return true;
};

test('create answers a job ARN; get by ARN (percent-encoded) and by bare id returns every field', async () => {
  const uri = await stage('create/part-1.jsonl', records(100));
  const created = await client().send(
    new CreateModelInvocationJobCommand(input('create-job-1', uri, { timeoutDurationInHours: 48 })),
  );
  assert.match(created.jobArn ?? '', /^arn:aws:bedrock:us-east-1:123456789012:model-invocation-job\/[a-z0-9]{12}$/);
  const arn = created.jobArn as string;
  const posted = emulator.log.at(-1);
  assert.equal(posted?.path, '/model-invocation-job');
  assert.match(String(posted?.headers.authorization), /Credential=S3RVER\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  // The SDK fills clientRequestToken itself when none is given (providers.md trap 12).
  const sent = posted?.body as Record<string, unknown>;
  assert.match(String(sent.clientRequestToken), /^[0-9a-f-]{36}$/);

  const job = await get(arn);
  assert.equal(emulator.log.at(-1)?.path, `/model-invocation-job/${encodeURIComponent(arn)}`);
  assert.ok(emulator.log.at(-1)?.path.includes('%3A') && emulator.log.at(-1)?.path.includes('%2F'));
  assert.equal(job.jobArn, arn);
  assert.equal(job.jobName, 'create-job-1');
  assert.equal(job.modelId, MODEL);
  assert.equal(job.roleArn, ROLE);
  assert.equal(job.clientRequestToken, sent.clientRequestToken);
  assert.equal(job.status, 'Submitted');
  assert.ok(job.submitTime instanceof Date && job.lastModifiedTime instanceof Date);
  assert.equal(job.endTime, undefined);
  assert.equal(job.timeoutDurationInHours, 48);
  assert.equal(job.jobExpirationTime?.getTime(), (job.submitTime?.getTime() ?? 0) + 48 * 3600_000);
  assert.deepEqual(job.inputDataConfig, { s3InputDataConfig: { s3Uri: uri } });
  assert.deepEqual(job.outputDataConfig, { s3OutputDataConfig: { s3Uri: OUTPUT_URI } });
  assert.equal(job.totalRecordCount, 0, 'zero while not validated');
  assert.equal(job.$metadata.httpStatusCode, 200);
  assert.ok(job.$metadata.requestId);

  const byId = await get(jobIdOf(arn));
  assert.equal(byId.jobArn, arn);
  assert.equal(emulator.log.at(-1)?.path, `/model-invocation-job/${jobIdOf(arn)}`);

  const recorded = emulator.job(arn);
  assert.equal(recorded?.region, 'us-east-1');
  assert.equal(recorded?.id, jobIdOf(arn));
  assert.equal(recorded?.clientRequestToken, sent.clientRequestToken);
  assert.deepEqual(
    emulator
      .calls()
      .slice(-3)
      .map((c) => [c.operation, c.region, c.accessKeyId, c.status]),
    [
      ['CreateModelInvocationJob', 'us-east-1', 'S3RVER', 200],
      ['GetModelInvocationJob', 'us-east-1', 'S3RVER', 200],
      ['GetModelInvocationJob', 'us-east-1', 'S3RVER', 200],
    ],
  );
  const raw = await fetch(`${emulator.url}/model-invocation-job/${jobIdOf(arn)}`, {
    headers: { authorization: String(posted?.headers.authorization) },
  });
  assert.deepEqual(((await raw.json()) as typeof EXTRA_FIELD).future_field, EXTRA_FIELD.future_field);

  await assert.rejects(get('abcdefabcdef'), raises('ResourceNotFoundException', 404));
  await assert.rejects(get('not_an_id'), raises('ValidationException', 400));
});

test('a job belongs to the region its create was signed for', async () => {
  const uri = await stage('region/part-1.jsonl', records(100));
  const west = client(emulator, { region: 'eu-west-1' });
  const { jobArn } = await west.send(new CreateModelInvocationJobCommand(input('region-job', uri)));
  assert.match(jobArn ?? '', /^arn:aws:bedrock:eu-west-1:/);
  assert.equal(emulator.job(jobArn as string)?.region, 'eu-west-1');
  assert.equal((await get(jobArn as string, west)).status, 'Submitted');
  // The us-east-1 endpoint does not know a eu-west-1 job, by ARN or by id.
  await assert.rejects(get(jobArn as string), raises('ResourceNotFoundException', 404));
  await assert.rejects(get(jobIdOf(jobArn as string)), raises('ResourceNotFoundException', 404));
  // A model ARN of another region than the call's is refused; in the call's region it is fine.
  const westModel = `arn:aws:bedrock:eu-west-1::foundation-model/${MODEL}`;
  await assert.rejects(
    client().send(new CreateModelInvocationJobCommand(input('region-arn-east', uri, { modelId: westModel }))),
    raises('ValidationException', 400, /eu-west-1/),
  );
  const inWest = await west.send(
    new CreateModelInvocationJobCommand(input('region-arn-west', uri, { modelId: westModel })),
  );
  assert.equal(emulator.job(inWest.jobArn as string)?.region, 'eu-west-1');
  await emulator.finish(jobArn as string, 'Failed', 'cleanup');
  await emulator.finish(inWest.jobArn as string, 'Failed', 'cleanup');
});

test('calls must be SigV4-signed for service bedrock with a known access key id', async () => {
  const stranger = client(emulator, { credentials: { accessKeyId: 'AKIAUNKNOWN', secretAccessKey: 'x' } });
  await assert.rejects(
    stranger.send(new ListModelInvocationJobsCommand({})),
    raises('UnrecognizedClientException', 403, /security token/),
  );
  const signedFor = (service: string) =>
    `AWS4-HMAC-SHA256 Credential=S3RVER/20261120/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=00`;
  const raw = (headers: Record<string, string>) => fetch(`${emulator.url}/model-invocation-jobs`, { headers });
  const unsigned = await raw({});
  assert.equal(unsigned.status, 403);
  assert.equal(unsigned.headers.get('x-amzn-errortype'), 'MissingAuthenticationTokenException');
  const wrongService = await raw({ authorization: signedFor('s3') });
  assert.equal(wrongService.status, 403);
  assert.equal(wrongService.headers.get('x-amzn-errortype'), 'InvalidSignatureException');
  assert.equal((await raw({ authorization: signedFor('bedrock') })).status, 200);
  const others = await startAnother({ accessKeyIds: ['AKIAOTHER'] });
  const otherKey = client(others, { credentials: { accessKeyId: 'AKIAOTHER', secretAccessKey: 'y' } });
  assert.deepEqual((await otherKey.send(new ListModelInvocationJobsCommand({}))).invocationJobSummaries, []);
});

test('a reused clientRequestToken returns the same job; a reused job name is refused', async () => {
  const uri = await stage('idem/part-1.jsonl', records(100));
  const sdk = client();
  const first = await sdk.send(
    new CreateModelInvocationJobCommand(input('idem-job', uri, { clientRequestToken: 'barge-bat-1' })),
  );
  const jobCount = emulator.jobs().length;
  const again = await sdk.send(
    new CreateModelInvocationJobCommand(input('idem-job', uri, { clientRequestToken: 'barge-bat-1' })),
  );
  assert.equal(again.jobArn, first.jobArn);
  assert.equal(again.$metadata.httpStatusCode, 200);
  assert.equal(emulator.jobs().length, jobCount);
  await assert.rejects(
    sdk.send(new CreateModelInvocationJobCommand(input('idem-job', uri, { clientRequestToken: 'barge-bat-2' }))),
    raises('ValidationException', 400, /idem-job/),
  );
  // Without a token the SDK generates a fresh one each time: a retried create is a new job.
  await assert.rejects(
    sdk.send(new CreateModelInvocationJobCommand(input('idem-job', uri))),
    raises('ValidationException', 400),
  );
  await emulator.finish(first.jobArn as string, 'Failed', 'cleanup');
});

test('create refuses bad fields with a synchronous ValidationException naming them', async () => {
  const sdk = client();
  const uri = `s3://${IN}/nothing/`;
  const refused = (more: Partial<CreateModelInvocationJobCommandInput>, message: RegExp, name = 'bad-fields') =>
    assert.rejects(
      sdk.send(new CreateModelInvocationJobCommand(input(name, uri, more))),
      raises('ValidationException', 400, message),
    );
  await refused(
    { jobName: 'crg_01' },
    /^1 validation error detected: Value 'crg_01' at 'jobName' failed to satisfy constraint/,
  );
  await refused(
    { jobName: 'a'.repeat(64) },
    /at 'jobName' failed to satisfy constraint: Member must have length between 1 and 63/,
  );
  await refused({ jobName: '' }, /at 'jobName'/);
  await refused({ roleArn: 'arn:aws:iam::123:role/x' }, /at 'roleArn'/);
  await refused({ roleArn: 'BedrockBatchRole' }, /at 'roleArn'/);
  await refused({ modelId: '' }, /at 'modelId'/);
  await refused(
    { inputDataConfig: { s3InputDataConfig: { s3Uri: 'https://example.com/in' } } },
    /inputDataConfig\.s3InputDataConfig\.s3Uri/,
  );
  await refused({ outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://Bad_Bucket/out' } } }, /outputDataConfig/);
  await refused({ timeoutDurationInHours: 12 }, /greater than or equal to 24/);
  await refused({ timeoutDurationInHours: 169 }, /less than or equal to 168/);
  await refused({ clientRequestToken: 'bad_token' }, /at 'clientRequestToken'/);
  await refused({ jobName: 'x_y', roleArn: 'nope' }, /^2 validation errors detected: .*jobName.*; .*roleArn/);
  // Allowed characters: '+', '-', '.' after the first alphanumeric run, up to 63 characters.
  const ok = await sdk.send(
    new CreateModelInvocationJobCommand(input(`ok-1.2+3--x${'a'.repeat(52)}`, uri, { timeoutDurationInHours: 168 })),
  );
  await emulator.finish(ok.jobArn as string, 'Failed', 'cleanup');
});

test('more unfinished jobs per model than maxJobsInProgress is ServiceQuotaExceededException', async () => {
  const small = await startAnother({ maxJobsInProgress: 2 });
  const sdk = client(small);
  const uri = `s3://${IN}/quota/`;
  const first = await sdk.send(new CreateModelInvocationJobCommand(input('quota-1', uri)));
  await sdk.send(new CreateModelInvocationJobCommand(input('quota-2', uri)));
  await assert.rejects(
    sdk.send(new CreateModelInvocationJobCommand(input('quota-3', uri))),
    raises('ServiceQuotaExceededException', 400, /limit of 2/),
  );
  // The quota is per model; another model has its own.
  const otherModel = 'anthropic.claude-3-5-haiku-20241022-v1:0';
  await sdk.send(new CreateModelInvocationJobCommand(input('quota-other', uri, { modelId: otherModel })));
  // A job that ends frees its slot.
  await small.finish(first.jobArn as string, 'Failed', 'done');
  await sdk.send(new CreateModelInvocationJobCommand(input('quota-3', uri)));
});

test('a job walks every status to Completed; the output is shuffled .jsonl.out files and a manifest', async () => {
  const stepping = await startAnother({ stepEveryGets: 1 });
  const sdk = client(stepping);
  const first = records(70);
  const second = [
    ...records(29, 70),
    { recordId: 'noversion01', modelInput: { max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } },
    { recordId: 'withmodel01', modelInput: modelInput('hi', { model: MODEL }) },
    { recordId: 'shortreply1', modelInput: modelInput('cut me', { max_tokens: 3 }) },
  ];
  await stage('walk/a.jsonl', first);
  await stage('walk/b.jsonl', second);
  await stage('walk/notes.txt', ['not input']);
  const { jobArn } = await sdk.send(new CreateModelInvocationJobCommand(input('walk-job', `s3://${IN}/walk`)));
  const arn = jobArn as string;
  const seen: string[] = [];
  for (let i = 0; i < 4; i++) seen.push(String((await get(arn, sdk)).status));
  assert.deepEqual(seen, ['Validating', 'Scheduled', 'InProgress', 'Completed']);
  const done = await get(arn, sdk);
  assert.equal(done.status, 'Completed');
  assert.ok(done.endTime instanceof Date);
  assert.deepEqual(
    [done.totalRecordCount, done.processedRecordCount, done.successRecordCount, done.errorRecordCount],
    [102, 102, 100, 2],
  );

  const id = jobIdOf(arn);
  assert.deepEqual(await outputKeys(id), [
    `results/${id}/a.jsonl.out`,
    `results/${id}/b.jsonl.out`,
    `results/${id}/manifest.json.out`,
  ]);
  assert.equal((await s3server.getObject(OUT, `results/${id}/a.jsonl.out`)).contentType, 'application/octet-stream');
  const linesA = await outputLines(`results/${id}/a.jsonl.out`);
  const linesB = await outputLines(`results/${id}/b.jsonl.out`);
  assert.equal(linesA.length, 70);
  assert.notDeepEqual(
    linesA.map((l) => l.recordId),
    first.map((r) => r.recordId),
    'output order differs from input order',
  );
  assert.deepEqual(linesA.map((l) => l.recordId).sort(), first.map((r) => r.recordId).sort());
  const byId = new Map([...linesA, ...linesB].map((l) => [l.recordId as string, l]));

  const ok = byId.get(recordId(5));
  assert.deepEqual(Object.keys(ok ?? {}), ['recordId', 'modelInput', 'modelOutput']);
  assert.deepEqual(ok?.modelInput, modelInput('question 5'));
  const message = ok?.modelOutput;
  assert.match(message.id, /^msg_bdrk_01[A-Za-z0-9]{22}$/);
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.model, MODEL);
  assert.equal(message.content[0].type, 'text');
  assert.ok(message.content[0].text.length > 0);
  assert.equal(message.stop_reason, 'end_turn');
  assert.equal(message.stop_sequence, null);
  assert.ok(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);
  assert.deepEqual(message.future_field, EXTRA_FIELD.future_field);
  const short = byId.get('shortreply1')?.modelOutput;
  assert.equal(short.stop_reason, 'max_tokens');
  assert.equal(short.usage.output_tokens, 3);

  const noVersion = byId.get('noversion01');
  assert.deepEqual(Object.keys(noVersion ?? {}), ['recordId', 'modelInput', 'error']);
  assert.equal(noVersion?.error.errorCode, 400);
  assert.match(
    noVersion?.error.errorMessage,
    /^Malformed input request: #: required key \[anthropic_version\] not found/,
  );
  assert.match(byId.get('withmodel01')?.error.errorMessage, /extraneous key \[model\]/);

  const manifest = await outputLines(`results/${id}/manifest.json.out`);
  const succeeded = [...byId.values()].filter((l) => l.modelOutput);
  assert.deepEqual(manifest, [
    {
      totalRecordCount: 102,
      processedRecordCount: 102,
      successRecordCount: 100,
      errorRecordCount: 2,
      inputTokenCount: succeeded.reduce((sum, l) => sum + l.modelOutput.usage.input_tokens, 0),
      outputTokenCount: succeeded.reduce((sum, l) => sum + l.modelOutput.usage.output_tokens, 0),
    },
  ]);
  const job = stepping.job(arn);
  assert.equal(job?.records?.length, 102);
  assert.deepEqual(job?.inputKeys, ['walk/a.jsonl', 'walk/b.jsonl']);
  assert.equal(job?.gets, 5);
  // A finished job cannot be stopped.
  await assert.rejects(
    sdk.send(new StopModelInvocationJobCommand({ jobIdentifier: arn })),
    raises('ConflictException', 400, /Completed/),
  );
});

test('an input URI may name one object; a job with an output folder ending in / writes under it once', async () => {
  const uri = await stage('single/only.jsonl', records(100));
  await stage('single/ignored.jsonl', records(5, 500));
  const { jobArn } = await client().send(
    new CreateModelInvocationJobCommand(
      input('single-object', uri, { outputDataConfig: { s3OutputDataConfig: { s3Uri: `${OUTPUT_URI}/` } } }),
    ),
  );
  await emulator.finish(jobArn);
  const id = jobIdOf(jobArn as string);
  assert.equal((await get(jobArn as string)).status, 'Completed');
  assert.deepEqual(await outputKeys(id), [`results/${id}/manifest.json.out`, `results/${id}/only.jsonl.out`]);
  assert.equal((await outputLines(`results/${id}/only.jsonl.out`)).length, 100);
});

test('PartiallyCompleted keeps the records with an explicit outcome; the others are absent', async () => {
  const chosen = (record: InputRecord) =>
    Number(record.recordId) % 10 === 0 ? { type: 'succeeded' as const } : undefined;
  const partial = await startAnother({ outcome: chosen });
  await stage('partial/part-1.jsonl', records(100));
  const { jobArn } = await client(partial).send(
    new CreateModelInvocationJobCommand(input('partial-job', `s3://${IN}/partial/`)),
  );
  partial.setOutcome(recordId(1), { type: 'errored', errorCode: 429, errorMessage: 'Too many requests' });
  await partial.finish(jobArn, 'PartiallyCompleted');
  const job = await get(jobArn as string, client(partial));
  assert.equal(job.status, 'PartiallyCompleted');
  assert.deepEqual(
    [job.totalRecordCount, job.processedRecordCount, job.successRecordCount, job.errorRecordCount],
    [100, 11, 10, 1],
  );
  const id = jobIdOf(jobArn as string);
  const lines = await outputLines(`results/${id}/part-1.jsonl.out`);
  assert.equal(lines.length, 11);
  assert.deepEqual(lines.find((l) => l.recordId === recordId(1))?.error, {
    errorCode: 429,
    errorMessage: 'Too many requests',
  });
  const manifest = (await outputLines(`results/${id}/manifest.json.out`))[0];
  assert.equal(manifest?.totalRecordCount, 100);
  assert.equal(manifest?.processedRecordCount, 11);
});

test('a job below the minimum record count fails while validating, naming the count; the minimum is an option', async () => {
  const uri = await stage('few/part-1.jsonl', records(5));
  const { jobArn } = await client().send(new CreateModelInvocationJobCommand(input('too-few', uri)));
  await emulator.advance(jobArn);
  assert.equal((await get(jobArn as string)).status, 'Validating');
  await emulator.advance(jobArn);
  const failed = await get(jobArn as string);
  assert.equal(failed.status, 'Failed');
  assert.match(failed.message ?? '', /5 records, fewer than the minimum of 100/);
  assert.ok(failed.endTime instanceof Date);
  assert.deepEqual(await outputKeys(jobIdOf(jobArn as string)), []);

  const lenient = await startAnother({ minRecords: 3, maxRecordsPerFile: 4 });
  const { jobArn: okArn } = await client(lenient).send(new CreateModelInvocationJobCommand(input('few-ok', uri)));
  await lenient.finish(okArn);
  assert.equal(lenient.job(okArn as string)?.status, 'Failed');
  assert.match(
    lenient.job(okArn as string)?.message ?? '',
    /5 records, more than the maximum of 4 records per input file/,
  );
  const four = await stage('few4/part-1.jsonl', records(4));
  const { jobArn: fourArn } = await client(lenient).send(new CreateModelInvocationJobCommand(input('four-ok', four)));
  await lenient.finish(fourArn);
  assert.equal(lenient.job(fourArn as string)?.status, 'Completed');
});

test('bad lines, a missing input and a role without access fail the job, never the create', async () => {
  const sdk = client();
  const badLine = `s3://${IN}/badline/part-1.jsonl`;
  await s3.send(
    new PutObjectCommand({
      Bucket: IN,
      Key: 'badline/part-1.jsonl',
      Body: '{"recordId":"a","modelInput":{}}\nnot json\n',
    }),
  );
  const missing = `s3://${IN}/nowhere/`;
  const arns: string[] = [];
  for (const [name, uri] of [
    ['bad-line', badLine],
    ['missing-input', missing],
  ] as const) {
    arns.push((await sdk.send(new CreateModelInvocationJobCommand(input(name, uri)))).jobArn as string);
  }
  await emulator.finish(arns[0]);
  await emulator.finish(arns[1]);
  assert.match(emulator.job(arns[0] as string)?.message ?? '', /Line 2 of .* is not valid JSON/);
  assert.match(emulator.job(arns[1] as string)?.message ?? '', /No \.jsonl input files/);

  const denied = await startAnother({ roleCanAccess: (bucket) => bucket !== OUT });
  const uri = await stage('denied/part-1.jsonl', records(100));
  const { jobArn } = await client(denied).send(new CreateModelInvocationJobCommand(input('denied-job', uri)));
  await denied.finish(jobArn);
  const job = await get(jobArn as string, client(denied));
  assert.equal(job.status, 'Failed');
  assert.match(job.message ?? '', new RegExp(`Access denied: the service role ${ROLE} cannot access s3://${OUT}`));
});

test('past its timeout a job that never started is Expired, a running one PartiallyCompleted', async () => {
  let now = Date.parse('2026-11-20T10:00:00Z');
  const timed = await startAnother({ clock: () => now });
  const sdk = client(timed);
  const uri = await stage('timeout/part-1.jsonl', records(100));
  const { jobArn: waiting } = await sdk.send(
    new CreateModelInvocationJobCommand(input('timeout-waiting', uri, { timeoutDurationInHours: 24 })),
  );
  const { jobArn: running } = await sdk.send(
    new CreateModelInvocationJobCommand(input('timeout-running', uri, { timeoutDurationInHours: 24 })),
  );
  await timed.advance(waiting);
  await timed.advance(waiting);
  await timed.advance(running);
  await timed.advance(running);
  await timed.advance(running);
  assert.deepEqual(
    [timed.job(waiting as string)?.status, timed.job(running as string)?.status],
    ['Scheduled', 'InProgress'],
  );
  timed.setOutcome(recordId(7), { type: 'succeeded' });

  now += 24 * 3600_000 - 1;
  assert.equal((await get(waiting as string, sdk)).status, 'Scheduled');
  now += 1;
  const expired = await get(waiting as string, sdk);
  assert.equal(expired.status, 'Expired');
  assert.equal(expired.endTime?.toISOString(), '2026-11-21T10:00:00.000Z');
  assert.deepEqual(await outputKeys(jobIdOf(waiting as string)), []);
  // List sees the timeout too.
  const listed = await sdk.send(new ListModelInvocationJobsCommand({ nameContains: 'timeout-running' }));
  assert.equal(listed.invocationJobSummaries?.[0]?.status, 'PartiallyCompleted');
  const id = jobIdOf(running as string);
  assert.deepEqual(
    (await outputLines(`results/${id}/part-1.jsonl.out`)).map((l) => l.recordId),
    [recordId(7)],
  );

  // finish() can choose Expired for a job that has not started, and refuses it for one that has.
  const { jobArn: later } = await sdk.send(new CreateModelInvocationJobCommand(input('timeout-later', uri)));
  await timed.finish(later, 'Expired');
  assert.equal(timed.job(later as string)?.status, 'Expired');
  assert.equal(timed.job(later as string)?.records?.length, 100, 'it passed validation first');
});

test('stop walks Stopping → Stopped; records with an explicit outcome count as processed', async () => {
  const sdk = client();
  const uri = await stage('stop/part-1.jsonl', records(100));
  const { jobArn } = await sdk.send(new CreateModelInvocationJobCommand(input('stop-job', uri)));
  await emulator.advance(jobArn);
  await emulator.advance(jobArn);
  await emulator.advance(jobArn);
  assert.equal((await get(jobArn as string)).status, 'InProgress');
  emulator.setOutcome(recordId(3), { type: 'succeeded' });
  emulator.setOutcome(recordId(4), { type: 'errored', errorCode: 500, errorMessage: 'Internal error' });
  const stopped = await sdk.send(new StopModelInvocationJobCommand({ jobIdentifier: jobArn }));
  assert.equal(stopped.$metadata.httpStatusCode, 200);
  assert.equal(emulator.log.at(-1)?.body, undefined);
  assert.equal((await get(jobArn as string)).status, 'Stopping');
  // Stopping again is not an error.
  await sdk.send(new StopModelInvocationJobCommand({ jobIdentifier: jobIdOf(jobArn as string) }));
  await emulator.advance(jobArn);
  const job = await get(jobArn as string);
  assert.equal(job.status, 'Stopped');
  assert.deepEqual([job.processedRecordCount, job.successRecordCount, job.errorRecordCount], [2, 1, 1]);
  const id = jobIdOf(jobArn as string);
  assert.deepEqual((await outputLines(`results/${id}/part-1.jsonl.out`)).map((l) => l.recordId).sort(), [
    recordId(3),
    recordId(4),
  ]);
  await assert.rejects(
    sdk.send(new StopModelInvocationJobCommand({ jobIdentifier: jobArn })),
    raises('ConflictException', 400),
  );

  // Stopped before it started: nothing processed, no output.
  const { jobArn: early } = await sdk.send(new CreateModelInvocationJobCommand(input('stop-early', uri)));
  await sdk.send(new StopModelInvocationJobCommand({ jobIdentifier: early }));
  await emulator.finish(early);
  assert.equal((await get(early as string)).status, 'Stopped');
  assert.deepEqual(await outputKeys(jobIdOf(early as string)), []);
});

test('list filters by name, status and submit time, pages with nextToken, newest first by default', async () => {
  let now = Date.parse('2026-11-20T10:00:00Z');
  const listing = await startAnother({ clock: () => now });
  const sdk = client(listing);
  const uri = `s3://${IN}/list/`;
  const arns: string[] = [];
  for (let i = 0; i < 5; i++) {
    arns.push((await sdk.send(new CreateModelInvocationJobCommand(input(`list-job-${i}`, uri)))).jobArn as string);
    now += 60_000;
  }
  await sdk.send(new CreateModelInvocationJobCommand(input('other-name', uri)));
  await listing.finish(arns[1], 'Failed', 'x');
  const newest = [...arns].reverse();

  const first = await sdk.send(new ListModelInvocationJobsCommand({ nameContains: 'list-job', maxResults: 2 }));
  assert.deepEqual(
    first.invocationJobSummaries?.map((j) => j.jobArn),
    newest.slice(0, 2),
  );
  assert.ok(first.nextToken);
  const summary = first.invocationJobSummaries?.[0];
  assert.equal(summary?.jobName, 'list-job-4');
  assert.equal(summary?.status, 'Submitted');
  assert.ok(summary?.submitTime instanceof Date);
  assert.deepEqual(summary?.inputDataConfig, { s3InputDataConfig: { s3Uri: uri } });
  const second = await sdk.send(
    new ListModelInvocationJobsCommand({ nameContains: 'list-job', maxResults: 2, nextToken: first.nextToken }),
  );
  assert.deepEqual(
    second.invocationJobSummaries?.map((j) => j.jobArn),
    newest.slice(2, 4),
  );

  const all: string[] = [];
  for await (const page of paginateListModelInvocationJobs(
    { client: sdk, pageSize: 2 },
    { nameContains: 'list-job' },
  )) {
    for (const job of page.invocationJobSummaries ?? []) all.push(job.jobArn as string);
  }
  assert.deepEqual(all, newest);
  assert.deepEqual(
    listing.log
      .filter((r) => r.path === '/model-invocation-jobs')
      .slice(-3)
      .map((r) => [r.query.maxResults, r.query.nameContains, r.query.nextToken !== undefined]),
    [
      ['2', 'list-job', false],
      ['2', 'list-job', true],
      ['2', 'list-job', true],
    ],
  );

  const ascending = await sdk.send(
    new ListModelInvocationJobsCommand({ nameContains: 'list-job', sortBy: 'CreationTime', sortOrder: 'Ascending' }),
  );
  assert.deepEqual(
    ascending.invocationJobSummaries?.map((j) => j.jobArn),
    arns,
  );
  const failed = await sdk.send(new ListModelInvocationJobsCommand({ statusEquals: 'Failed' }));
  assert.deepEqual(
    failed.invocationJobSummaries?.map((j) => j.jobArn),
    [arns[1]],
  );
  const window = await sdk.send(
    new ListModelInvocationJobsCommand({
      nameContains: 'list-job',
      submitTimeAfter: new Date('2026-11-20T10:00:30Z'),
      submitTimeBefore: new Date('2026-11-20T10:03:30Z'),
    }),
  );
  assert.deepEqual(
    window.invocationJobSummaries?.map((j) => j.jobName),
    ['list-job-3', 'list-job-2', 'list-job-1'],
  );
  assert.equal(
    (await sdk.send(new ListModelInvocationJobsCommand({ nameContains: 'none' }))).invocationJobSummaries?.length,
    0,
  );
  // Other regions see none of them.
  const west = client(listing, { region: 'eu-west-1' });
  assert.deepEqual((await west.send(new ListModelInvocationJobsCommand({}))).invocationJobSummaries, []);
  await assert.rejects(
    sdk.send(new ListModelInvocationJobsCommand({ maxResults: 1001 })),
    raises('ValidationException', 400),
  );
  await assert.rejects(
    sdk.send(new ListModelInvocationJobsCommand({ nextToken: 'bogus' })),
    raises('ValidationException', 400),
  );
});

test('injected faults: typed 429 and 5xx, SDK retries, held creates, 404 right after create', async () => {
  const uri = `s3://${IN}/faults/`;
  emulator.faults.failNext(1, { status: 429, method: 'GET', path: /^\/model-invocation-jobs$/ });
  await assert.rejects(client().send(new ListModelInvocationJobsCommand({})), raises('ThrottlingException', 429));
  emulator.faults.failNext(1, { status: 500, method: 'GET' });
  await assert.rejects(client().send(new ListModelInvocationJobsCommand({})), raises('InternalServerException', 500));
  emulator.faults.failNext(1, { status: 503, method: 'GET' });
  await assert.rejects(
    client().send(new ListModelInvocationJobsCommand({})),
    raises('ServiceUnavailableException', 503),
  );

  // The SDK retries a throttled create with the same clientRequestToken: still one job.
  emulator.faults.failNext(1, { status: 429, method: 'POST', retryAfterSeconds: 0 });
  const logged = emulator.log.length;
  const retried = await client(emulator, { maxAttempts: 2 }).send(
    new CreateModelInvocationJobCommand(input('fault-retry', uri)),
  );
  const tries = emulator.log.slice(logged);
  assert.deepEqual(
    tries.map((r) => r.status),
    [429, 200],
  );
  const tokens = tries.map((r) => (r.body as { clientRequestToken?: string }).clientRequestToken);
  assert.ok(tokens[0]);
  assert.equal(tokens[1], tokens[0]);
  assert.equal(emulator.jobs().filter((j) => j.name === 'fault-retry').length, 1);

  const held = emulator.holdNextCreate();
  const creating = client().send(new CreateModelInvocationJobCommand(input('fault-held', uri)));
  await held.arrived;
  assert.ok(
    emulator.jobs().some((j) => j.name === 'fault-held'),
    'applied on arrival',
  );
  held.release();
  const { jobArn } = await creating;

  emulator.faults.notFoundAfterCreate(1);
  const ghost = await client().send(new CreateModelInvocationJobCommand(input('fault-ghost', uri)));
  emulator.faults.notFoundAfterCreate(0);
  await assert.rejects(get(ghost.jobArn as string), raises('ResourceNotFoundException', 404));
  assert.equal((await get(ghost.jobArn as string)).jobName, 'fault-ghost');
  for (const arn of [retried.jobArn, jobArn, ghost.jobArn]) await emulator.finish(arn, 'Failed', 'cleanup');
});
