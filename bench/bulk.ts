/**
 * bench:bulk: `barge submit --file` of a 100,000-line JSONL file against a local service, beside
 * bench:submit's rate in the same run, with the CLI's peak memory.
 *
 * 1. Builds the service, then runs bench:submit (SQLite, autocannon, 64 connections) for its req/s.
 * 2. Creates a project and key with the `barge` CLI on a fresh SQLite file and starts
 *    `barge serve --role api` (as bench:submit's default).
 * 3. Writes the file (the same body as bench:submit's, one per line) and times
 *    `barge submit --file … --concurrency 64 --json`, sampling the CLI's resident memory.
 * 4. Stops the service and checks that the database holds exactly one cargo per line, the very
 *    ids of the map file.
 *
 * Goals (reported, not enforced): the CLI's req/s at least 80 % of bench:submit's; its peak RSS
 * under 150 MB.
 *
 * Usage: npm run bench:bulk -- [--lines 100000] [--concurrency 64] [--submit-duration 10] [--no-build]
 * Exit:  1 when the check fails or the run breaks.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import Database from 'better-sqlite3';
import { nodeFlagsOf } from '../test/helpers/serve.js';
import { submissionBody } from './lib/cargo.js';
import { installCleanup, makeTempDir, runMain } from './lib/lifecycle.js';
import { bounded } from './lib/options.js';
import { bargeEnv, ROOT, startServe, stopChild, track } from './lib/processes.js';
import { goal, machineLine } from './lib/report.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const GOAL_RATIO = 0.8;
const GOAL_RSS_MB = 150;
const CHILD_TIMEOUT_MS = 15_000;

interface Options {
  lines: number;
  concurrency: number;
  submitSeconds: number;
  build: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      lines: { type: 'string', default: '100000' },
      concurrency: { type: 'string', default: '64' },
      'submit-duration': { type: 'string', default: '10' },
      'no-build': { type: 'boolean', default: false },
    },
  });
  return {
    lines: bounded('--lines', values.lines, 1, 10_000_000),
    concurrency: bounded('--concurrency', values.concurrency, 1, 1024),
    submitSeconds: bounded('--submit-duration', values['submit-duration'], 1, 600),
    build: !values['no-build'],
  };
}

/** bench:submit's req/s for the service (the first column of its `req/s` row). */
async function submitRate(seconds: number): Promise<number> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/submit.ts'), '--no-build', '--duration', String(seconds)],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, timeout: (seconds + 120) * 1000 },
  );
  const row = /^\s*req\/s\s+(\d+)/m.exec(stdout);
  if (!row) throw new Error(`bench:submit printed no req/s row:\n${stdout}`);
  return Number(row[1]);
}

async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args, '--json'], {
    env,
    timeout: CHILD_TIMEOUT_MS,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Runs the CLI to its end, sampling its resident memory (Linux /proc) every 50 ms. */
async function timedSubmit(args: string[], env: NodeJS.ProcessEnv) {
  const started = performance.now();
  // As the installed `barge` runs: with the node flags of its #! line.
  const child = track(
    spawn(process.execPath, [...nodeFlagsOf(CLI), CLI, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] }),
  );
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  let peakKb = 0;
  const sample = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const hwm = Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      peakKb = Math.max(peakKb, hwm);
    } catch {
      // gone, or not Linux
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sample);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`barge submit --file exited with ${code}: ${stdout}`);
  return { seconds, peakMb: peakKb / 1024, summary: JSON.parse(stdout) as { submitted: number } };
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:bulk', 30 * 60_000, { onSignal: 'graceful', childTimeoutMs: CHILD_TIMEOUT_MS });
  if (options.build) await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });

  process.stderr.write(`bench:submit for ${options.submitSeconds} s ...\n`);
  const submitRps = await submitRate(options.submitSeconds);

  const dir = makeTempDir('barge-bench-bulk-');
  const dbPath = join(dir, 'barge.sqlite');
  const env = bargeEnv({
    BARGE_DATABASE_URL: `sqlite:${dbPath}`,
    BARGE_LOG_LEVEL: 'warn',
    BARGE_RATE_LIMIT_MAX: '1000000000',
    HOST: '127.0.0.1',
  });
  await runCli(['project', 'create', 'bench'], env);
  const { key } = await runCli(['key', 'create', 'bench', '--name', 'bench'], env);
  if (typeof key !== 'string') throw new Error('`barge key create --json` printed no key');
  const service = await startServe({
    name: 'service',
    label: 'service',
    exitedWhen: 'before listening',
    cli: CLI,
    role: 'api',
    nodeFlags: [],
    env,
    timeoutMs: CHILD_TIMEOUT_MS,
  });

  const file = join(dir, 'requests.jsonl');
  const line = submissionBody(null);
  writeFileSync(file, `${`${line}\n`.repeat(options.lines)}`);
  process.stderr.write(`barge submit --file of ${options.lines} lines ...\n`);
  const run = await timedSubmit(
    [
      'submit',
      '--file',
      file,
      '--concurrency',
      String(options.concurrency),
      '--json',
      '--url',
      service.url as string,
      '--key',
      key,
    ],
    env,
  );
  const code = await stopChild(service.child, CHILD_TIMEOUT_MS);
  if (code !== 0) throw new Error(`the service exited with code ${code}`);

  const mapped = new Set(
    readFileSync(`${file}.cargo`, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { cargo_id: string }).cargo_id),
  );
  const sqlite = new Database(dbPath, { readonly: true });
  const stored = (sqlite.prepare('select id from cargo').all() as { id: string }[]).map((r) => r.id);
  sqlite.close();
  const exact =
    stored.length === options.lines && mapped.size === options.lines && stored.every((id) => mapped.has(id));

  const rps = options.lines / run.seconds;
  const ratio = rps / submitRps;
  process.stdout.write(
    [
      '',
      `bench:bulk  ${new Date().toISOString()}`,
      machineLine(),
      `  barge submit --file: ${options.lines} lines, ${Buffer.byteLength(line)}-byte body, --concurrency ${options.concurrency}; serve --role api; SQLite WAL synchronous=FULL`,
      '',
      `  bench:submit (autocannon, 64 connections)  ${submitRps.toFixed(0)} req/s`,
      `  barge submit --file                        ${rps.toFixed(0)} req/s  (${run.seconds.toFixed(1)} s)`,
      `  CLI peak RSS                               ${run.peakMb.toFixed(0)} MB`,
      `  stored cargo = map entries = lines         ${exact ? 'yes' : `NO (${stored.length} stored, ${mapped.size} mapped)`}`,
      '',
      `  ratio bulk/submit: ${ratio.toFixed(3)}  (goal >= ${GOAL_RATIO}: ${goal(ratio >= GOAL_RATIO)})`,
      `  CLI peak RSS: ${run.peakMb.toFixed(0)} MB  (goal < ${GOAL_RSS_MB} MB: ${goal(run.peakMb < GOAL_RSS_MB)})`,
      '',
    ].join('\n'),
  );
  if (!exact) throw new Error('the database does not hold exactly one cargo per line');
}

runMain('bench:bulk', main, 'stack');
