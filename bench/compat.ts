/**
 * bench:compat: a 50,000-request OpenAI batch through the official `openai` SDK against a local
 * `barge serve`, beside the same 50,000 cargo through POST /cargo/load, with the service's peak
 * memory.
 *
 * 1. Builds the service; a fresh database (SQLite temp file, or `--db` PostgreSQL) and `barge serve
 *    --role all` (svc-mock answering at once, a batch sent a second after its first cargo) per phase.
 * 2. compat: writes a JSONL file of N chat-completions lines (bench:submit's typical request,
 *    translated), then through the SDK: files.create (streamed from disk), batches.create,
 *    batches.retrieve every 250 ms until `completed`, files.content of the output file, read to its
 *    end; checks it holds N lines in submission order.
 * 3. cargo API: `barge submit --file` of the same N requests (POST /cargo/load bodies, 64 in
 *    flight), then `barge results --file --out`, which waits for every result and writes them.
 * The service's peak RSS (VmHWM) is read at the end of each phase.
 *
 * Goals (reported, not enforced): the service's peak RSS under 300 MB in the compat phase; its
 * time within 2× of the cargo API's.
 *
 * Usage: npm run bench:compat -- [--requests 50000] [--db postgres://…] [--only compat,cargo] [--no-build]
 * Exit:  1 when a check fails or the run breaks.
 */
import { execFile } from 'node:child_process';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import OpenAI, { toStreamingFile } from 'openai';
import { createApiKey } from '../src/store/admin/api-keys.js';
import { METADATA, MODEL_INPUT, submissionBody } from './lib/cargo.js';
import { benchProject, withFreshDatabase } from './lib/database.js';
import { installCleanup, makeTempDir, runMain } from './lib/lifecycle.js';
import { bounded, modeList, postgresUrl } from './lib/options.js';
import { bargeEnv, ROOT, startServe, stopChild } from './lib/processes.js';
import { databaseKind, goal, log, machineLine } from './lib/report.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const GOAL_RSS_MB = 300;
const GOAL_RATIO = 2;
const CHILD_TIMEOUT_MS = 60_000;

const PHASES = ['compat', 'cargo'] as const;

interface Options {
  requests: number;
  pgUrl: string | null;
  build: boolean;
  only: (typeof PHASES)[number][];
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '50000' },
      db: { type: 'string' },
      only: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
    },
  });
  return {
    requests: bounded('--requests', values.requests, 1, 50_000),
    pgUrl: postgresUrl(values.db),
    build: !values['no-build'],
    only: modeList(values.only, PHASES),
  };
}

/** The service's peak resident memory so far (Linux /proc), in MB. */
function peakRssMb(pid: number): number {
  const kb = /^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) / 1024;
}

/** bench:submit's typical request as a line of an OpenAI batch input file. */
function batchLine(i: number): string {
  const { system, messages, max_tokens, temperature } = MODEL_INPUT;
  return JSON.stringify({
    custom_id: `req-${i}`,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'svc-mock', messages: [{ role: 'system', content: system }, ...messages], max_tokens, temperature },
  });
}

interface Phase {
  seconds: number;
  peakMb: number;
  detail: string;
}

/** A fresh database, its bench project and key, and `barge serve --role all` over it, for one phase. */
async function withService(
  options: Options,
  run: (service: { url: string; key: string; pid: number }) => Promise<Omit<Phase, 'peakMb'>>,
): Promise<Phase> {
  return withFreshDatabase(options.pgUrl, 'barge-bench-compat-', async (bench) => {
    const projectId = await benchProject(bench.database, Date.now());
    const { key } = await createApiKey(bench.database, { projectId, name: 'bench', expiresAt: null, now: Date.now() });
    const service = await startServe({
      name: 'service',
      label: 'service',
      exitedWhen: 'before listening',
      cli: CLI,
      role: 'all',
      nodeFlags: [],
      env: bargeEnv({
        BARGE_DATABASE_URL: bench.url,
        BARGE_LOG_LEVEL: 'warn',
        BARGE_RATE_LIMIT_MAX: '1000000000',
        BARGE_MOCK_LATENCY_MS: '0',
        BARGE_BATCH_MAX_WAIT_MS: '1000',
        HOST: '127.0.0.1',
      }),
      timeoutMs: CHILD_TIMEOUT_MS,
    });
    const pid = service.child.pid as number;
    try {
      const phase = await run({ url: service.url as string, key, pid });
      return { ...phase, peakMb: peakRssMb(pid) };
    } finally {
      await stopChild(service.child, CHILD_TIMEOUT_MS);
    }
  });
}

/** Upload, create, poll, download through the SDK; the output checked line by line. */
async function compatPhase(options: Options, file: string): Promise<Phase> {
  return withService(options, async ({ url, key, pid }) => {
    const peak = () => `${peakRssMb(pid).toFixed(0)} MB`;
    const sdk = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0, timeout: 30 * 60_000 });
    const started = performance.now();
    const upload = await sdk.files.create({
      file: toStreamingFile(createReadStream(file), 'requests.jsonl'),
      purpose: 'batch',
    });
    const uploaded = performance.now();
    const peaks = [peak()];
    let batch = await sdk.batches.create({
      input_file_id: upload.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const created = performance.now();
    peaks.push(peak());
    while (batch.status === 'in_progress') {
      await new Promise((resolve) => setTimeout(resolve, 250));
      batch = await sdk.batches.retrieve(batch.id);
    }
    const completed = performance.now();
    peaks.push(peak());
    if (batch.status !== 'completed' || !batch.output_file_id) throw new Error(`the batch ended ${batch.status}`);
    const response = await sdk.files.content(batch.output_file_id);
    let lines = 0;
    let partial = '';
    let inOrder = true;
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      const text = partial + decoder.decode(chunk, { stream: true });
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        if (!line.includes(`"custom_id":"req-${lines}"`)) inOrder = false;
        lines++;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    if (lines !== options.requests || !inOrder) {
      throw new Error(`the output file has ${lines} lines (in order: ${inOrder}), not ${options.requests}`);
    }
    const s = (a: number, b: number) => `${((b - a) / 1000).toFixed(1)} s`;
    return {
      seconds,
      detail: `upload ${s(started, uploaded)}, create ${s(uploaded, created)}, until completed ${s(created, completed)}, download ${s(completed, performance.now())}; peak RSS after each: ${[...peaks, peak()].join(', ')}`,
    };
  });
}

/** `barge submit --file` then `barge results --file --out`, timed together. */
async function cargoPhase(options: Options, dir: string): Promise<Phase> {
  const file = join(dir, 'cargo.jsonl');
  writeFileSync(file, `${submissionBody(null)}\n`.repeat(options.requests));
  return withService(options, async ({ url, key }) => {
    const cli = (args: string[]) =>
      promisify(execFile)(process.execPath, [CLI, ...args, '--url', url, '--key', key, '--json'], {
        env: bargeEnv({}),
        maxBuffer: 64 * 1024 * 1024,
        timeout: 30 * 60_000,
      });
    const started = performance.now();
    await cli(['submit', '--file', file, '--concurrency', '64']);
    const submitted = performance.now();
    await cli(['results', '--file', file, '--out', join(dir, 'results.jsonl')]);
    const seconds = (performance.now() - started) / 1000;
    const lines = readFileSync(join(dir, 'results.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    if (lines !== options.requests) throw new Error(`barge results wrote ${lines} lines, not ${options.requests}`);
    return {
      seconds,
      detail: `submit --file ${((submitted - started) / 1000).toFixed(1)} s, results --file ${(seconds - (submitted - started) / 1000).toFixed(1)} s`,
    };
  });
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:compat', 60 * 60_000, { onSignal: 'graceful', childTimeoutMs: CHILD_TIMEOUT_MS });
  if (options.build) await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
  const dir = makeTempDir('barge-bench-compat-files-');
  const file = join(dir, 'requests.jsonl');
  writeFileSync(file, Array.from({ length: options.requests }, (_, i) => `${batchLine(i)}\n`).join(''));

  let compat: Phase | null = null;
  let cargo: Phase | null = null;
  if (options.only.includes('compat')) {
    log(`compat: ${options.requests} lines through the openai SDK ...`);
    compat = await compatPhase(options, file);
  }
  if (options.only.includes('cargo')) {
    log(`cargo API: the same ${options.requests} through barge submit --file and barge results --file ...`);
    cargo = await cargoPhase(options, dir);
  }
  process.stdout.write(
    [
      '',
      `bench:compat  ${new Date().toISOString()}`,
      machineLine(),
      `  database: ${databaseKind(options.pgUrl)}; barge serve --role all, svc-mock latency 0, BARGE_BATCH_MAX_WAIT_MS=1000`,
      `  ${options.requests} requests (bench:submit's typical one; metadata ${JSON.stringify(METADATA).length} bytes on the cargo API)`,
      '',
      ...(compat
        ? [
            `  OpenAI batch through the SDK   ${compat.seconds.toFixed(1)} s  (${compat.detail}); service peak RSS ${compat.peakMb.toFixed(0)} MB`,
          ]
        : []),
      ...(cargo
        ? [
            `  POST /cargo/load (barge CLI)   ${cargo.seconds.toFixed(1)} s  (${cargo.detail}); service peak RSS ${cargo.peakMb.toFixed(0)} MB`,
          ]
        : []),
      '',
      ...(compat
        ? [
            `  service peak RSS, batch: ${compat.peakMb.toFixed(0)} MB  (goal < ${GOAL_RSS_MB} MB: ${goal(compat.peakMb < GOAL_RSS_MB)})`,
          ]
        : []),
      ...(compat && cargo
        ? [
            `  time batch / cargo API: ${(compat.seconds / cargo.seconds).toFixed(2)}  (goal <= ${GOAL_RATIO}: ${goal(compat.seconds / cargo.seconds <= GOAL_RATIO)})`,
          ]
        : []),
      '',
    ].join('\n'),
  );
}

runMain('bench:compat', main, 'stack');
