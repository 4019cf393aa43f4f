/**
 * `barge provider check <name>` as installed (the built CLI in a child process) against the
 * Anthropic and OpenAI emulators on loopback: a working key passes with each capability listed, a
 * wrong one fails with the provider's words and exit 1 without the key in sight, `--json` prints
 * `{provider, ok, capabilities}`, names that are no provider or not enabled are refused with the
 * settings to set, svc-mock passes, and no database is ever opened.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { type BedrockEmulator, startBedrockEmulator } from '../helpers/bedrock-emulator.js';
import type { LoggedRequest } from '../helpers/emulator-http.js';
import { type OpenAIEmulator, startOpenAIEmulator } from '../helpers/openai-emulator.js';
import { realtimeCatalogText } from '../helpers/realtime.js';
import { type S3Server, SERVICE_CREDENTIALS, startS3Server } from '../helpers/s3-server.js';
import { assertBuildIsFresh, BARGE_BIN } from '../helpers/serve.js';
import { freePort } from '../helpers/wait.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
/** Where the database would be: its folder does not exist, and nothing may create it. */
let databaseDir: string;
let anthropic: AnthropicEmulator;
let openai: OpenAIEmulator;

before(async () => {
  assertBuildIsFresh();
  dir = mkdtempSync(join(tmpdir(), 'barge-provider-check-'));
  databaseDir = join(dir, 'never-created');
  [anthropic, openai] = await Promise.all([startAnthropicEmulator(), startOpenAIEmulator()]);
});
after(async () => {
  await Promise.all([anthropic?.close(), openai?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the built CLI with only `env`'s provider settings: none inherited from the test run. */
function barge(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(BARGE_|ANTHROPIC_|OPENAI_|AWS_)/.test(name) && name !== 'HOST' && name !== 'PORT') base[name] = value;
  }
  const childEnv = { ...base, BARGE_DATABASE_URL: `sqlite:${join(databaseDir, 'barge.sqlite')}`, ...env };
  return new Promise((resolve) => {
    execFile(process.execPath, [BARGE_BIN, ...args], { env: childEnv, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const anthropicEnv = (key = anthropic.apiKey) => ({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: anthropic.url });
const openaiEnv = (key = openai.apiKey) => ({ OPENAI_API_KEY: key, OPENAI_BASE_URL: openai.baseURL });

function oneJsonObject(run: Run): any {
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `one line of output, got: ${run.stdout}`);
  return JSON.parse(lines[0] as string);
}

/** The exit code, and that the command opened no database: the folder it would be in was never made. */
function exited(run: Run, code: number): Run {
  assert.equal(run.code, code, `exit ${run.code}, expected ${code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  assert.equal(existsSync(databaseDir), false, `${databaseDir} exists: a provider check opened the database`);
  return run;
}

/** The calls `run` made to an emulator: every one a list of one, nothing written. */
async function readOnlyCalls(log: LoggedRequest[], run: () => Promise<Run>): Promise<[Run, LoggedRequest[]]> {
  const from = log.length;
  const result = await run();
  const calls = log.slice(from);
  for (const call of calls) {
    assert.equal(call.method, 'GET', `${call.method} ${call.path}: a check writes nothing`);
    assert.equal(call.query.limit, '1', `${call.path}: a list of one`);
  }
  return [result, calls];
}

describe('barge provider check', () => {
  test('anthropic with the right key passes, listing one Message Batch', async () => {
    // One batch at the provider, so the check's list has something to see.
    const created = await fetch(`${anthropic.url}/v1/messages/batches`, {
      method: 'POST',
      headers: { 'x-api-key': anthropic.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [
          {
            custom_id: 'seen',
            params: { model: 'claude-x', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
          },
        ],
      }),
    });
    assert.equal(created.status, 200, await created.clone().text());

    const [run, calls] = await readOnlyCalls(anthropic.log, () =>
      barge(anthropicEnv(), 'provider', 'check', 'anthropic'),
    );
    exited(run, 0);
    assert.deepEqual(
      calls.map((c) => c.path),
      ['/v1/messages/batches'],
    );
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'Provider check of anthropic: passed');
    assert.match(lines[1] ?? '', /^ {2}list message batches +ok +listed message batches \(1 seen\)$/);
    assert.equal(lines.length, 2, run.stdout);
  });

  test('anthropic with a wrong key fails with the provider error, exit 1, and no key printed', async () => {
    const wrong = 'sk-ant-wrong-key-0123456789';
    const [text] = await readOnlyCalls(anthropic.log, () =>
      barge(anthropicEnv(wrong), 'provider', 'check', 'anthropic'),
    );
    exited(text, 1);
    assert.match(text.stdout, /^Provider check of anthropic: FAILED$/m);
    assert.match(text.stdout, /^ {2}list message batches +failed +authentication_error: invalid x-api-key$/m);

    const jsonRun = exited(await barge(anthropicEnv(wrong), 'provider', 'check', 'anthropic', '--json'), 1);
    assert.deepEqual(oneJsonObject(jsonRun), {
      provider: 'anthropic',
      ok: false,
      capabilities: [{ name: 'list message batches', ok: false, detail: 'authentication_error: invalid x-api-key' }],
    });
    for (const run of [text, jsonRun])
      assert.ok(!`${run.stdout}${run.stderr}`.includes(wrong), 'the key is never printed');
  });

  test('openai with the right key passes both capabilities; --json is {provider, ok, capabilities}', async () => {
    const [text, calls] = await readOnlyCalls(openai.log, () => barge(openaiEnv(), 'provider', 'check', 'openai'));
    exited(text, 0);
    assert.deepEqual(calls.map((c) => `${c.path}?${new URLSearchParams(c.query)}`).sort(), [
      '/v1/batches?limit=1',
      '/v1/files?purpose=batch&limit=1',
    ]);
    assert.match(text.stdout, /^Provider check of openai: passed$/m);
    assert.match(text.stdout, /^ {2}list batches +ok +listed batches \(0 seen\)$/m);
    assert.match(text.stdout, /^ {2}list files +ok +listed files of purpose batch \(0 seen\)$/m);

    const json = oneJsonObject(exited(await barge(openaiEnv(), 'provider', 'check', 'openai', '--json'), 0));
    assert.deepEqual(Object.keys(json), ['provider', 'ok', 'capabilities']);
    assert.equal(json.provider, 'openai');
    assert.equal(json.ok, true);
    assert.deepEqual(
      json.capabilities.map((c: Record<string, unknown>) => Object.keys(c)),
      [
        ['name', 'ok', 'detail'],
        ['name', 'ok', 'detail'],
      ],
    );
    assert.deepEqual(
      json.capabilities.map((c: { name: string; ok: boolean }) => [c.name, c.ok]),
      [
        ['list batches', true],
        ['list files', true],
      ],
    );
  });

  test('openai with a wrong key fails both capabilities with exit 1; a key denied the Files API fails that one only', async () => {
    const wrong = 'sk-wrong-key-0123456789';
    const json = oneJsonObject(exited(await barge(openaiEnv(wrong), 'provider', 'check', 'openai', '--json'), 1));
    assert.equal(json.ok, false);
    const refused = 'invalid_request_error: Incorrect API key provided: sk-****6789.';
    assert.deepEqual(json.capabilities, [
      { name: 'list batches', ok: false, detail: refused },
      { name: 'list files', ok: false, detail: refused },
    ]);
    const text = exited(await barge(openaiEnv(wrong), 'provider', 'check', 'openai'), 1);
    assert.match(text.stdout, /^Provider check of openai: FAILED$/m);
    assert.ok(!`${text.stdout}${text.stderr}`.includes(wrong), 'the key is never printed');

    openai.faults.failNext(1, { method: 'GET', path: /^\/v1\/files$/, status: 403 });
    const partly = oneJsonObject(exited(await barge(openaiEnv(), 'provider', 'check', 'openai', '--json'), 1));
    assert.equal(partly.ok, false);
    assert.deepEqual(
      partly.capabilities.map((c: { name: string; ok: boolean }) => [c.name, c.ok]),
      [
        ['list batches', true],
        ['list files', false],
      ],
    );
    assert.equal(partly.capabilities[1].detail, 'invalid_request_error: injected failure');
  });

  test('a key the provider (or a proxy) echoes back is redacted', async () => {
    // Answers every call 401 with the key it was sent in the message, in each provider's shape.
    const echo: Server = createServer((req, res) => {
      const key = String(req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '') ?? '');
      const body = req.url?.startsWith('/v1/messages')
        ? { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${key}` } }
        : { error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error', code: null } };
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    try {
      const key = 'sk-echoed-secret-0123456789';
      const runs = await Promise.all([
        barge({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: url }, 'provider', 'check', 'anthropic', '--json'),
        barge({ OPENAI_API_KEY: key, OPENAI_BASE_URL: `${url}/v1` }, 'provider', 'check', 'openai', '--json'),
      ]);
      for (const run of runs) {
        const json = oneJsonObject(exited(run, 1));
        assert.ok(!`${run.stdout}${run.stderr}`.includes(key), `the key is never printed: ${run.stdout}`);
        for (const c of json.capabilities) assert.match(c.detail, /\[redacted\]/);
      }
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });

  test('a provider that cannot be reached fails with a connection error, not a crash', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const run = exited(
      await barge(
        { ANTHROPIC_API_KEY: anthropic.apiKey, ANTHROPIC_BASE_URL: closed },
        'provider',
        'check',
        'anthropic',
      ),
      1,
    );
    assert.match(run.stdout, /^ {2}list message batches +failed +connection_error: /m);
    assert.equal(run.stderr, '');
  });

  test('svc-mock passes, by either name, with no credentials', async () => {
    for (const name of ['svc-mock', 'mock']) {
      const text = exited(await barge({}, 'provider', 'check', name), 0);
      assert.match(
        text.stdout,
        /^Provider check of mock: passed\n {2}credentials +ok +svc-mock .*needs no credentials\n$/,
      );
    }
    assert.deepEqual(oneJsonObject(exited(await barge({}, 'provider', 'check', 'svc-mock', '--json'), 0)), {
      provider: 'mock',
      ok: true,
      capabilities: [{ name: 'credentials', ok: true, detail: 'svc-mock runs inside barge and needs no credentials' }],
    });
  });

  test('an unknown provider and one not enabled here are refused, naming what to set', async () => {
    // A catalog whose endpoint names a key variable that is not set.
    const catalog = join(mkdtempSync(join(tmpdir(), 'barge-check-catalog-')), 'models.json');
    writeFileSync(
      catalog,
      realtimeCatalogText({
        baseUrl: 'http://127.0.0.1:9/v1',
        apiKeyEnv: 'GPU1_KEY',
        maxConcurrency: 2,
        timeoutMs: 1000,
      }),
    );
    const [unknown, anthropicOff, openaiOff, bedrockOff, endpointOff, noEndpoint] = await Promise.all([
      barge({}, 'provider', 'check', 'azure', '--json'),
      barge(openaiEnv(), 'provider', 'check', 'anthropic', '--json'),
      barge(anthropicEnv(), 'provider', 'check', 'openai'),
      barge({}, 'provider', 'check', 'bedrock', '--json'),
      barge({ BARGE_MODELS_FILE: catalog }, 'provider', 'check', 'openai-compatible', '--json'),
      barge({}, 'provider', 'check', 'openai-compatible', '--json'),
    ]);
    const refused = (run: Run, message: string, json = true) => {
      exited(run, 1);
      assert.equal(run.stderr, `barge: ${message}\n`);
      if (json) assert.deepEqual(oneJsonObject(run), { error: message });
      else assert.equal(run.stdout, '');
    };
    refused(unknown, "no provider 'azure': use one of anthropic, openai, bedrock, mock, openai-compatible");
    refused(anthropicOff, "provider 'anthropic' is not enabled in this deployment: set ANTHROPIC_API_KEY to enable it");
    refused(openaiOff, "provider 'openai' is not enabled in this deployment: set OPENAI_API_KEY to enable it", false);
    refused(
      bedrockOff,
      "provider 'bedrock' is not enabled in this deployment: set BARGE_BEDROCK_ROLE_ARN and BARGE_BEDROCK_S3_URI to enable it",
    );
    // The endpoint is in the catalog: the message names the variable its key is read from.
    refused(endpointOff, "provider 'openai-compatible' is not enabled in this deployment: set GPU1_KEY to enable it");
    refused(
      noEndpoint,
      "provider 'openai-compatible' is not enabled in this deployment: set BARGE_MODELS_FILE to enable it",
    );
  });
});

describe('barge provider check bedrock', () => {
  let s3: S3Server;
  let bedrock: BedrockEmulator;
  before(async () => {
    s3 = await startS3Server();
    await s3.createBucket('barge-check');
    bedrock = await startBedrockEmulator({ s3Endpoint: s3.url });
  });
  after(async () => {
    await bedrock?.close();
    await s3?.close();
  });
  const bedrockEnv = (overrides: Record<string, string> = {}) => ({
    BARGE_BEDROCK_ROLE_ARN: 'arn:aws:iam::123456789012:role/barge-bedrock',
    BARGE_BEDROCK_S3_URI: 's3://barge-check/staging/',
    BARGE_BEDROCK_REGION: 'eu-west-1',
    BARGE_AWS_BEDROCK_ENDPOINT: bedrock.url,
    BARGE_AWS_S3_ENDPOINT: s3.url,
    BARGE_AWS_S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: SERVICE_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: SERVICE_CREDENTIALS.secretAccessKey,
    ...overrides,
  });

  test('lists one job in the configured region, then writes and deletes one object under the prefix', async () => {
    const from = bedrock.calls().length;
    const run = exited(await barge(bedrockEnv(), 'provider', 'check', 'bedrock', '--json'), 0);
    const report = oneJsonObject(run);
    assert.equal(report.ok, true);
    assert.deepEqual(
      report.capabilities.map((c: { name: string; ok: boolean }) => [c.name, c.ok]),
      [
        ['list model invocation jobs', true],
        ['write to the staging prefix', true],
        ['delete from the staging prefix', true],
      ],
    );
    assert.match(report.capabilities[1].detail, /^wrote s3:\/\/barge-check\/staging\/barge-provider-check-\d+\.txt$/);
    const calls = bedrock.calls().slice(from);
    assert.deepEqual(
      calls.map((c) => [c.operation, c.region]),
      [['ListModelInvocationJobs', 'eu-west-1']],
    );
    assert.deepEqual(await s3.keys('barge-check'), [], 'the probe object is gone');
  });

  test('a missing bucket fails the staging capabilities; unknown credentials fail every one; exit 1', async () => {
    const noBucket = exited(
      await barge(bedrockEnv({ BARGE_BEDROCK_S3_URI: 's3://no-such-bucket/x/' }), 'provider', 'check', 'bedrock'),
      1,
    );
    const lines = noBucket.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'Provider check of bedrock: FAILED');
    assert.match(lines[1] ?? '', /^ {2}list model invocation jobs +ok /);
    assert.match(
      lines[2] ?? '',
      /^ {2}write to the staging prefix +failed +write to the staging prefix: NoSuchBucket: /,
    );

    const secret = 'not-the-right-secret-0123456789';
    const stranger = exited(
      await barge(
        bedrockEnv({ AWS_ACCESS_KEY_ID: 'AKIASTRANGER0000', AWS_SECRET_ACCESS_KEY: secret }),
        'provider',
        'check',
        'bedrock',
        '--json',
      ),
      1,
    );
    const report = oneJsonObject(stranger);
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.capabilities.map((c: { ok: boolean }) => c.ok),
      [false, false, false],
    );
    assert.match(report.capabilities[0].detail, /UnrecognizedClientException/);
    assert.ok(!stranger.stdout.includes(secret) && !stranger.stderr.includes(secret), 'the secret is never printed');
  });
});
