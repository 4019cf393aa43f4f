/**
 * The Bedrock provider end to end: cargo loaded over barge's HTTP API, batched, staged in a real S3
 * server, created at the Bedrock emulator on loopback, polled, collected and read back as results,
 * on every backend. In-process suites drive the workers with a ManualClock (the emulator shares it);
 * the last suite kills a real `barge serve` while its create call is held open at the emulator.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { CANCELED_ERROR, REQUEST_EXPIRED_ERROR } from '../../src/domain/records.js';
import { roundUsd } from '../../src/domain/usage.js';
import { BedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import type { Service } from '../../src/service.js';
import { createProjectWithKey, fetchResult, loadCargo, storedCargo, testConfig } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { type BedrockEmulator, type BedrockOutcome, startBedrockEmulator } from '../helpers/bedrock-emulator.js';
import { harness, serveHarness } from '../helpers/harness.js';
import { assertAnsweredMessages, killDuringHeldCreate } from '../helpers/held-create.js';
import { batchOfCargo, settleCargo } from '../helpers/pipeline.js';
import { mediaParams } from '../helpers/request-surface.js';
import { type S3Server, SERVICE_CREDENTIALS, startS3Server } from '../helpers/s3-server.js';
import { waitFor } from '../helpers/wait.js';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/barge-bedrock';
const BUCKET = 'barge-bedrock-staging';
const S3_URI = `s3://${BUCKET}/staging/`;
const SONNET_ROUTE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const CATALOG = JSON.parse(readFileSync(new URL('../../models/catalog.json', import.meta.url), 'utf8')) as {
  models: { id: string; prices_usd_per_mtok: { batch_input: number; batch_output: number } }[];
};

type S3Rig = S3Server;

/** Bedrock settings for the emulator and S3 server; `overrides` as a test needs. */
function bedrockSettings(emu: BedrockEmulator, overrides: Partial<Config['providers']['bedrock'] & object> = {}) {
  return {
    roleArn: ROLE_ARN,
    s3Uri: S3_URI,
    region: 'us-east-1',
    endpoint: emu.url,
    minRecords: 100,
    maxRecords: 50_000,
    maxJobs: 10,
    ...overrides,
  };
}

/** A record's outcome, chosen by its first user message text (record ids repeat across jobs). */
const outcomes = new Map<string, BedrockOutcome>();
function outcomeOf(record: { modelInput: Record<string, unknown> }): BedrockOutcome | undefined {
  const messages = record.modelInput.messages as { content: unknown }[] | undefined;
  return outcomes.get(String(messages?.[0]?.content));
}

const ask = (model: string, text: string, params: Record<string, unknown> = {}) => ({
  params: { model, max_tokens: 60, messages: [{ role: 'user', content: text }], ...params },
});

for (const backend of await backends()) {
  describe(`Bedrock through the pipeline on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 26, 12));
    let s3: S3Rig;
    let emu: BedrockEmulator;
    const config: Partial<Config> = {};
    before(async () => {
      s3 = await startS3Server();
      await s3.createBucket(BUCKET);
      emu = await startBedrockEmulator({ s3Endpoint: s3.url, clock: () => clock.now(), outcome: outcomeOf });
      const base = testConfig();
      config.providers = { ...base.providers, bedrock: bedrockSettings(emu) };
      config.objectStore = {
        ...base.objectStore,
        s3Endpoint: s3.url,
        forcePathStyle: true,
        credentials: SERVICE_CREDENTIALS,
      };
    });
    after(async () => {
      await emu?.close();
      await s3?.close();
    });
    const h = harness(backend, { clock, config });

    const load = (key: string, body: unknown) => loadCargo(h.app, key, body);
    const result = (key: string, id: string) => fetchResult(h.app, key, id);
    const batchRow = (cargoId: string) => batchOfCargo(h.db.database, cargoId);
    /** The emulator job recorded for the batch of this cargo. */
    const jobOf = async (cargoId: string) => {
      const row = await batchRow(cargoId);
      assert.ok(row.job_id, `the batch of ${cargoId} has a job`);
      const job = emu.job(row.job_id);
      assert.ok(job, `the emulator knows ${row.job_id}`);
      return { row, job };
    };
    /** The staged input file of a batch, as parsed lines. */
    const stagedLines = async (batchId: string) => {
      const object = await s3.getObject(BUCKET, `staging/${batchId}/input.jsonl`);
      return object.body
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { recordId: string; modelInput: Record<string, unknown> });
    };
    /** Flushes the groups (Bedrock's 5-minute wait) and runs stage + create. */
    const submit = async (worker: Service) => {
      clock.advance(5 * 60_000);
      await worker.runUntilIdle();
    };
    const settle = (worker: Service, ids: string[]) =>
      settleCargo(worker, clock, h.db.database, ids, { stepMs: 60_000, tries: 30 });
    /** The modelOutput the emulator wrote for the record of a job whose first user text is `text`. */
    const modelOutputFor = (job: NonNullable<ReturnType<BedrockEmulator['job']>>, text: string) => {
      const record = job.records?.find((r) => outcomeText(r) === text);
      assert.ok(record, `no record for ${text}`);
      const line = job.output?.find((l) => l.json.recordId === record.recordId);
      assert.ok(line, `no output line for ${text}`);
      return line.json.modelOutput as Record<string, unknown>;
    };

    test('catalog id, bedrock/<model id> and every ARN kind: one job each, in the ARN region, from a staged, padded JSONL', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const models: [model: string, modelId: string, region: string][] = [
        ['claude-sonnet-4-5', SONNET_ROUTE, 'us-east-1'],
        ['bedrock/anthropic.claude-3-haiku-20240307-v1:0', 'anthropic.claude-3-haiku-20240307-v1:0', 'us-east-1'],
        ...(
          [
            ['arn:aws:bedrock:us-west-2::foundation-model/anthropic.claude-3-haiku-20240307-v1:0', 'us-west-2'],
            [`arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.${SONNET_ROUTE.slice(3)}`, 'eu-west-1'],
            ['arn:aws:bedrock:us-east-2:123456789012:application-inference-profile/a1b2c3d4e5f6', 'us-east-2'],
            ['arn:aws:bedrock:us-east-1:123456789012:provisioned-model/p1q2r3s4t5u6', 'us-east-1'],
            [
              'arn:aws:bedrock:ap-northeast-1:123456789012:custom-model/anthropic.claude-3-haiku/c1d2e3f4',
              'ap-northeast-1',
            ],
          ] as const
        ).map(([arn, region]): [string, string, string] => [arn, arn, region]),
      ];
      const ids = [];
      for (const [model] of models) ids.push(await load(key, ask(model, `route ${model}`)));
      const second = await load(key, ask('claude-sonnet-4-5', 'route claude-sonnet-4-5, again', { max_tokens: 7 }));
      await submit(worker);

      const jobIds = new Set<string>();
      for (const [i, [model, modelId, region]] of models.entries()) {
        const { row, job } = await jobOf(ids[i] as string);
        jobIds.add(job.arn);
        assert.equal(job.modelId, modelId, model);
        assert.equal(job.region, region, `${model}: the job runs in ${region}`);
        assert.match(job.arn, new RegExp(`^arn:aws:bedrock:${region}:`));
        assert.equal(job.name, `barge-${row.id.replace('_', '-')}`);
        assert.equal(job.clientRequestToken, row.id.replace('_', '-'));
        assert.equal(job.roleArn, ROLE_ARN);
        assert.equal(job.timeoutHours, 24);
        assert.deepEqual(job.inputDataConfig, {
          s3InputDataConfig: { s3Uri: `${S3_URI}${row.id}/input.jsonl`, s3InputFormat: 'JSONL' },
        });
        assert.deepEqual(job.outputDataConfig, { s3OutputDataConfig: { s3Uri: `${S3_URI}${row.id}/output/` } });
        assert.equal(row.status, 'processing');
      }
      assert.equal(jobIds.size, models.length, 'one job per model');
      assert.equal((await jobOf(second)).job.arn, (await jobOf(ids[0] as string)).job.arn);

      // The staged file: two requests of the catalog model, padded to Bedrock's minimum of 100.
      const { row } = await jobOf(ids[0] as string);
      const lines = await stagedLines(row.id);
      assert.equal(lines.length, 100);
      assert.deepEqual(
        lines.map((l) => l.recordId),
        Array.from({ length: 100 }, (_, i) => String(i).padStart(11, '0')),
      );
      const texts = lines.slice(0, 2).map((l) => (l.modelInput.messages as { content: string }[])[0]?.content);
      assert.deepEqual(texts.sort(), ['route claude-sonnet-4-5', 'route claude-sonnet-4-5, again']);
      const first = lines.find((l) => outcomeText(l) === 'route claude-sonnet-4-5');
      assert.deepEqual(first?.modelInput, {
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 60,
        messages: [{ role: 'user', content: 'route claude-sonnet-4-5' }],
      });
      for (const padding of lines.slice(2)) {
        assert.deepEqual(padding.modelInput, {
          anthropic_version: 'bedrock-2023-05-31',
          max_tokens: 1,
          messages: [{ role: 'user', content: '.' }],
        });
      }
      assert.equal(row.padding_count, 98);

      await emu.finish();
      await settle(worker, [...ids, second]);
      for (const [i, [model]] of models.entries()) {
        const res = await result(key, ids[i] as string);
        assert.equal(res.success, true, `${model}: ${res.error_message}`);
        const { job } = await jobOf(ids[i] as string);
        assert.deepEqual(
          res.response,
          modelOutputFor(job, `route ${model}`),
          'the response is modelOutput, every field',
        );
        assert.ok('future_field' in res.response);
      }
      // The staged input goes once the job has ended; Bedrock's output stays.
      const keys = await s3.keys(BUCKET);
      assert.ok(!keys.includes(`staging/${row.id}/input.jsonl`), 'the staged input is deleted');
      assert.ok(keys.some((k) => k.startsWith(`staging/${row.id}/output/`) && k.endsWith('manifest.json.out')));
    });

    test('the request surface Bedrock takes is staged as sent, under anthropic_version and without model; the answer is stored as returned', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const params = mediaParams('Bedrock surface');
      const id = await load(key, { params: { model: 'claude-sonnet-4-5', ...params } });
      await submit(worker);
      const { row } = await jobOf(id);
      const lastText = (l: { modelInput: Record<string, unknown> }) =>
        (l.modelInput.messages as { content: { text?: string }[] }[] | undefined)?.[2]?.content?.[0]?.text;
      const staged = (await stagedLines(row.id)).find((l) => lastText(l) === 'Bedrock surface');
      assert.ok(staged, 'the request is staged');
      assert.deepEqual(staged.modelInput, { anthropic_version: 'bedrock-2023-05-31', ...params });
      await emu.finish();
      await settle(worker, [id]);
      const { job } = await jobOf(id);
      const output = job.output?.find((l) => l.json.recordId === staged.recordId);
      assert.ok(output, 'the emulator answered the record');
      const res = await result(key, id);
      assert.equal(res.success, true, res.error_message);
      assert.deepEqual(res.response, output.json.modelOutput);
    });

    test('usage and cost count the cargo at the catalog batch prices, never the padding', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const ids = [
        await load(key, ask('claude-sonnet-4-5', 'usage one')),
        await load(key, ask('claude-sonnet-4-5', 'usage two')),
      ];
      await submit(worker);
      await emu.finish();
      await settle(worker, ids);
      const { row, job } = await jobOf(ids[0] as string);
      const outputs = ['usage one', 'usage two'].map((t) => modelOutputFor(job, t));
      const sum = (field: 'input_tokens' | 'output_tokens') =>
        outputs.reduce((n, o) => n + ((o.usage as Record<string, number>)[field] ?? 0), 0);

      const day = new Date(clock.now()).toISOString().slice(0, 10);
      const res = await h.app.request('GET', `/usage?from=${day}&to=${day}`, { key });
      assert.equal(res.status, 200, res.text);
      const prices = CATALOG.models.find((m) => m.id === 'claude-sonnet-4-5')?.prices_usd_per_mtok;
      assert.ok(prices);
      const cost = roundUsd(
        (sum('input_tokens') * prices.batch_input + sum('output_tokens') * prices.batch_output) / 1e6,
      );
      assert.equal(res.body.data.length, 1);
      assert.deepEqual(
        {
          cargo: res.body.data[0].cargo,
          requests: res.body.data[0].requests,
          input_tokens: res.body.data[0].input_tokens,
          output_tokens: res.body.data[0].output_tokens,
          cost_usd: res.body.data[0].cost_usd,
        },
        {
          cargo: 2,
          requests: 2,
          input_tokens: sum('input_tokens'),
          output_tokens: sum('output_tokens'),
          cost_usd: cost,
        },
      );
      const ended = await h.db.database.read
        .selectFrom('batches')
        .selectAll()
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      assert.equal(ended.padding_count, 98);
      assert.ok(Number(ended.padding_input_tokens) > 0, 'the padding tokens are the operator’s, on the batch');
    });

    test('a records cargo: record ids map back; an errored record fails with `<errorCode>: <errorMessage>`', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      outcomes.set('records: refused', { type: 'errored', errorCode: 400, errorMessage: 'Malformed input request' });
      const records = await load(key, {
        params: { model: 'claude-sonnet-4-5', max_tokens: 40 },
        records: [
          { recordId: 'zulu', modelInput: { messages: [{ role: 'user', content: 'records: fine' }] } },
          { recordId: 'alpha', modelInput: { messages: [{ role: 'user', content: 'records: refused' }] } },
          { recordId: 'mike', modelInput: { messages: [{ role: 'user', content: 'records: also fine' }] } },
        ],
      });
      await submit(worker);
      await emu.finish();
      await settle(worker, [records]);
      const { job } = await jobOf(records);
      const listed = await result(key, records);
      assert.equal(listed.success, false);
      assert.equal(listed.error_message, '1 of 3 records failed');
      assert.deepEqual(
        listed.response.records.map((r: { recordId: string }) => r.recordId),
        ['zulu', 'alpha', 'mike'],
      );
      const [zulu, alpha, mike] = listed.response.records;
      assert.deepEqual(zulu.response, modelOutputFor(job, 'records: fine'));
      assert.deepEqual(mike.response, modelOutputFor(job, 'records: also fine'));
      assert.deepEqual(alpha, {
        recordId: 'alpha',
        success: false,
        response: null,
        error: '400: Malformed input request',
      });
    });

    test('every terminal job status: PartiallyCompleted, Failed, Stopped and Expired', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      outcomes.set('partial: ran', { type: 'succeeded' });
      outcomes.set('partial: refused', { type: 'errored', errorCode: 424, errorMessage: 'model error' });
      const partial = [
        await load(key, ask('claude-sonnet-4-5', 'partial: ran')),
        await load(key, ask('claude-sonnet-4-5', 'partial: refused')),
        await load(key, ask('claude-sonnet-4-5', 'partial: never ran')),
      ];
      await submit(worker);
      const failed = [await load(key, ask('claude-sonnet-4-5', 'failed: one'))];
      await submit(worker);
      const stopped = [await load(key, ask('claude-sonnet-4-5', 'stopped: one'))];
      await submit(worker);
      const expired = [await load(key, ask('claude-sonnet-4-5', 'expired: one'))];
      await submit(worker);
      const jobs = await Promise.all(
        [partial, failed, stopped, expired].map(async (ids) => (await jobOf(ids[0] as string)).job),
      );
      assert.equal(new Set(jobs.map((j) => j.arn)).size, 4, 'four jobs');
      const [partialJob, failedJob, stoppedJob, expiredJob] = jobs;
      assert.ok(partialJob && failedJob && stoppedJob && expiredJob);
      await emu.finish(partialJob.arn, 'PartiallyCompleted');
      await emu.finish(failedJob.arn, 'Failed', 'The provided role could not read s3://barge-bedrock-staging/');
      await emu.advance(stoppedJob.arn);
      await emu.advance(stoppedJob.arn);
      await emu.advance(stoppedJob.arn);
      await emu.finish(stoppedJob.arn, 'Stopped');
      await emu.finish(expiredJob.arn, 'Expired');
      await settle(worker, [...partial, ...failed, ...stopped, ...expired]);

      const [ran, refused, never] = await Promise.all(partial.map((id) => result(key, id)));
      assert.equal(ran.success, true);
      assert.deepEqual(ran.response, modelOutputFor(partialJob, 'partial: ran'));
      assert.deepEqual([refused.success, refused.error_message], [false, '424: model error']);
      assert.deepEqual([never.success, never.error_message], [false, REQUEST_EXPIRED_ERROR]);
      const failure = await result(key, failed[0] as string);
      assert.equal(failure.success, false);
      assert.match(failure.error_message, /The provided role could not read s3:\/\/barge-bedrock-staging\//);
      const stop = await result(key, stopped[0] as string);
      assert.deepEqual([stop.success, stop.error_message], [false, CANCELED_ERROR]);
      const late = await result(key, expired[0] as string);
      assert.deepEqual([late.success, late.error_message], [false, REQUEST_EXPIRED_ERROR]);
    });

    test('throttling and 5xx on create are retried; an access denial (no iam:PassRole) fails the batch on its third refusal', async () => {
      const { worker } = await h.worker();
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const create = { method: 'POST', path: /^\/model-invocation-job$/ };
      emu.faults.failNext(1, { ...create, status: 429, retryAfterSeconds: null });
      emu.faults.failNext(1, { ...create, status: 503 });
      const retried = await load(key, ask('claude-sonnet-4-5', 'create: throttled first'));
      await submit(worker);
      for (let i = 0; i < 5 && (await batchRow(retried)).job_id === null; i++) {
        clock.advance(60_000);
        await worker.runUntilIdle();
      }
      const { row } = await jobOf(retried);
      assert.equal(row.attempts, 2, 'two failed tries, then the job');
      await emu.finish();
      await settle(worker, [retried]);
      assert.equal((await result(key, retried)).success, true);

      // Waits for a rate limit are not refusals: the batch still gets three refusals before it fails.
      emu.faults.failNext(2, { ...create, status: 429, retryAfterSeconds: null });
      emu.faults.failNext(3, { ...create, status: 403 });
      const denied = await load(key, ask('claude-sonnet-4-5', 'create: denied'));
      await submit(worker);
      // Tracking says why the cargo waits, and later why it failed.
      const tracking = async () => (await h.app.request('GET', `/cargo/${denied}/tracking`, { key })).body;
      const waiting = await tracking();
      assert.equal(waiting.status, 'batched');
      assert.match(
        waiting.status_description,
        /^Assigned to a batch, waiting for submission; the last try failed and will be retried: creating the job of batch bat_\w+: ThrottlingException: /,
      );
      await settle(worker, [denied]);
      const failed = await tracking();
      assert.equal(failed.status, 'failed');
      assert.match(
        failed.status_description,
        /^Processing failed: errored: the provider refused the credentials: .*AccessDeniedException/,
      );
      const creates = emu.calls().filter((c) => c.operation === 'CreateModelInvocationJob' && c.status === 403);
      assert.equal(creates.length, 3, 'three refusals');
      const failure = await result(key, denied);
      assert.equal(failure.success, false);
      assert.match(
        failure.error_message,
        /^errored: the provider refused the credentials: creating the job of batch bat_\w+: AccessDeniedException: /,
      );
      const ended = await batchRow(denied);
      assert.deepEqual([ended.attempts, ended.refusals], [4, 2], 'failed on the third refusal, after two waits');
      assert.ok(ended.provider_state, 'the input was staged before the creates were refused');
      assert.ok(!(await s3.keys(BUCKET)).includes(`staging/${ended.id}/input.jsonl`), 'and is deleted with no job');
    });

    test('past BARGE_BEDROCK_MAX_JOBS no batch is formed ahead; a later project rides in the next job started', async () => {
      const limited = new BedrockProvider({
        ...bedrockSettings(emu, { maxJobs: 1 }),
        s3Endpoint: s3.url,
        forcePathStyle: true,
        credentials: SERVICE_CREDENTIALS,
        clock,
      });
      const { worker } = await h.worker({ providers: [limited] });
      const a = await createProjectWithKey(h.db.database, { now: clock.now() });
      const b = await createProjectWithKey(h.db.database, { now: clock.now() });
      const firstId = await load(a.key, ask('claude-sonnet-4-5', 'slot: first'));
      await submit(worker);
      const { job: firstJob } = await jobOf(firstId);

      // Project A's backlog arrives while the one slot is taken, then project B's single cargo.
      const backlog = [
        await load(a.key, ask('claude-sonnet-4-5', 'slot: a second')),
        await load(a.key, ask('claude-sonnet-4-5', 'slot: a third')),
      ];
      await submit(worker);
      const late = await load(b.key, ask('claude-sonnet-4-5', 'slot: b only'));
      for (let i = 0; i < 5; i++) {
        clock.advance(60_000);
        await worker.runUntilIdle();
      }
      for (const id of [...backlog, late]) {
        assert.equal((await storedCargo(h.db.database, id))?.status, 'pending', 'no batch formed ahead of the slot');
      }

      await emu.finish(firstJob.arn);
      await settle(worker, [firstId]);
      await submit(worker);
      const { row, job: nextJob } = await jobOf(late);
      assert.notEqual(nextJob.arn, firstJob.arn);
      assert.equal(row.cargo_count, 3, "B's cargo rides with A's backlog in the next job started");
      assert.equal(row.attempts, 0, 'waiting for a slot is not a failed attempt');
      await emu.finish(nextJob.arn);
      await settle(worker, [...backlog, late]);
      assert.equal((await result(b.key, late)).success, true);
    });
  });
}

/** The first user message text of a staged or emulated record. */
function outcomeText(record: { modelInput: Record<string, unknown> }): string {
  return String((record.modelInput.messages as { content: unknown }[] | undefined)?.[0]?.content);
}

for (const backend of await backends({ childProcesses: true })) {
  describe(`a barge serve killed during a Bedrock create on ${backend.name}`, () => {
    let s3: S3Rig;
    let emu: BedrockEmulator;
    before(async () => {
      s3 = await startS3Server();
      await s3.createBucket(BUCKET);
      // Real processes, real time: each get moves a job one status on.
      emu = await startBedrockEmulator({ s3Endpoint: s3.url, stepEveryGets: 1, minRecords: 1 });
    });
    after(async () => {
      await emu?.close();
      await s3?.close();
    });
    const s = serveHarness(backend);

    test('the job the lost create made is adopted by the next process: one job, every cargo answered', async () => {
      const { key } = await createProjectWithKey(s.db.database);
      const env = {
        BARGE_BEDROCK_ROLE_ARN: ROLE_ARN,
        BARGE_BEDROCK_S3_URI: S3_URI,
        BARGE_BEDROCK_REGION: 'us-east-1',
        BARGE_BEDROCK_MIN_RECORDS: '1',
        BARGE_AWS_BEDROCK_ENDPOINT: emu.url,
        BARGE_AWS_S3_ENDPOINT: s3.url,
        BARGE_AWS_S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: SERVICE_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: SERVICE_CREDENTIALS.secretAccessKey,
        BARGE_LEASE_MS: '2000',
      };
      const { batchId, ids, url } = await killDuringHeldCreate(s, {
        env,
        key,
        held: emu.holdNextCreate('on-arrival'),
        bodies: [0, 1, 2].map((i) => ask('claude-sonnet-4-5', `crash ${i}`)),
        whileHeld: () => assert.equal(emu.jobs().length, 1, 'the held create already made the job'),
        timeoutMs: 30_000,
      });
      const jobs = emu.jobs();
      assert.equal(jobs.length, 1, `one job: ${JSON.stringify(jobs.map((j) => j.status))}`);
      assert.equal(jobs[0]?.status, 'Completed');
      assert.equal(
        (await batchOfCargo(s.db.database, ids[0] as string)).job_id,
        jobs[0]?.arn,
        'the adopted job is the one that ran',
      );
      await assertAnsweredMessages(url, key, ids);
      await waitFor(
        'the staged input to be deleted',
        () => s3.keys(BUCKET),
        (keys) => !keys.includes(`staging/${batchId}/input.jsonl`),
        { timeoutMs: 5000 },
      );
    });
  });
}
