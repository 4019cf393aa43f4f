/**
 * bench:bulk: `barge submit --file` of a 100,000-line JSONL file against a local service, beside
 * bench:submit's rate on the same machine, with the CLI's peak memory.
 *
 * 1. Builds the service, then runs bench:submit (SQLite, autocannon, 64 connections) for its req/s.
 * 2. A round: creates a project and key with the `barge` CLI on a fresh SQLite file, starts
 *    `barge serve --role api` (as bench:submit's default) and warms it with an untimed submit of
 *    other lines (bench:submit warms its service too, for 2 s).
 * 3. Writes the file (the same body as bench:submit's, one per line) and times
 *    `barge submit --file … --concurrency 64 --json`, sampling the CLI's resident memory.
 * 4. Stops the service and checks that the database holds exactly one cargo per line of both
 *    files, the very ids of their map files.
 * 5. Runs bench:submit again, and so on for `--rounds`: each round's bulk rate is set against the
 *    mean of the bench:submit runs just before and after it, so that a machine whose speed drifts
 *    over a minute weighs on both sides alike.
 *
 * Goals (reported, not enforced): the median round's bulk rate at least 80 % of bench:submit's;
 * the CLI's peak RSS under 150 MB in every round.
 *
 * Usage: npm run bench:bulk -- [--lines 100000] [--warmup-lines 10000] [--rounds 3] [--concurrency 64]
 *                              [--submit-duration 10] [--no-build]
 * Exit:  1 when the check fails or the run breaks.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import Database from 'better-sqlite3';
import { nodeFlagsOf } from '../test/helpers/serve.js';
import { METADATA, submissionBody } from './lib/cargo.js';
import { installCleanup, makeTempDir, removeTempDir, runMain } from './lib/lifecycle.js';
import { bounded } from './lib/options.js';
import { bargeEnv, ROOT, startServe, stopChild, track } from './lib/processes.js';
import { goal, machineLine } from './lib/report.js';
import { median } from './lib/stats.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const GOAL_RATIO = 0.8;
const GOAL_RSS_MB = 150;
const CHILD_TIMEOUT_MS = 15_000;

interface Options {
  lines: number;
  warmupLines: number;
  rounds: number;
  concurrency: number;
  submitSeconds: number;
  build: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      lines: { type: 'string', default: '100000' },
      'warmup-lines': { type: 'string', default: '10000' },
      rounds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '64' },
      'submit-duration': { type: 'string', default: '10' },
      'no-build': { type: 'boolean', default: false },
    },
  });
  return {
    lines: bounded('--lines', values.lines, 1, 10_000_000),
    warmupLines: bounded('--warmup-lines', values['warmup-lines'], 0, 1_000_000),
    rounds: bounded('--rounds', values.rounds, 1, 20),
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

interface Round {
  /** The bulk submit's lines a second. */
  rps: number;
  seconds: number;
  peakMb: number;
}

/**
 * One round's bulk submit: a fresh database and service, warmed by an untimed submit of other
 * lines, then the timed one; the database must hold exactly the cargo of both map files.
 */
async function bulkRound(options: Options): Promise<Round> {
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
  const submit = (file: string) =>
    timedSubmit(
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

  // The same request with other metadata, so other Idempotency-Keys: the timed run finds none of
  // its lines stored.
  const files: string[] = [];
  if (options.warmupLines > 0) {
    const warmup = join(dir, 'warmup.jsonl');
    const line = JSON.stringify({ ...JSON.parse(submissionBody(null)), metadata: { ...METADATA, queue: 'warmup' } });
    writeFileSync(warmup, `${line}\n`.repeat(options.warmupLines));
    process.stderr.write(`barge submit --file of ${options.warmupLines} lines to warm the service ...\n`);
    await submit(warmup);
    files.push(warmup);
  }
  const file = join(dir, 'requests.jsonl');
  writeFileSync(file, `${submissionBody(null)}\n`.repeat(options.lines));
  process.stderr.write(`barge submit --file of ${options.lines} lines ...\n`);
  const run = await submit(file);
  files.push(file);
  const code = await stopChild(service.child, CHILD_TIMEOUT_MS);
  if (code !== 0) throw new Error(`the service exited with code ${code}`);

  const mapped = new Set(
    files.flatMap((f) =>
      readFileSync(`${f}.cargo`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { cargo_id: string }).cargo_id),
    ),
  );
  const sqlite = new Database(dbPath, { readonly: true });
  const stored = (sqlite.prepare('select id from cargo').all() as { id: string }[]).map((r) => r.id);
  sqlite.close();
  // Each round writes its own 90 MB: it goes with the round.
  removeTempDir(dir);
  const lines = options.lines + options.warmupLines;
  if (stored.length !== lines || mapped.size !== lines || !stored.every((id) => mapped.has(id))) {
    throw new Error(
      `the database does not hold exactly one cargo per line: ${stored.length} stored, ${mapped.size} mapped, ${lines} lines`,
    );
  }
  return { rps: options.lines / run.seconds, seconds: run.seconds, peakMb: run.peakMb };
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:bulk', 60 * 60_000, { onSignal: 'graceful', childTimeoutMs: CHILD_TIMEOUT_MS });
  if (options.build) await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });

  const submitRates: number[] = [];
  const rounds: Round[] = [];
  for (let i = 0; i <= options.rounds; i++) {
    process.stderr.write(`bench:submit for ${options.submitSeconds} s ...\n`);
    submitRates.push(await submitRate(options.submitSeconds));
    if (i < options.rounds) rounds.push(await bulkRound(options));
  }
  // Each round against the mean of the bench:submit runs around it.
  const ratios = rounds.map(
    (round, i) => round.rps / (((submitRates[i] as number) + (submitRates[i + 1] as number)) / 2),
  );
  const ratio = median(ratios);
  const peakMb = Math.max(...rounds.map((round) => round.peakMb));
  const line = submissionBody(null);
  process.stdout.write(
    [
      '',
      `bench:bulk  ${new Date().toISOString()}`,
      machineLine(),
      `  barge submit --file: ${options.lines} lines (after ${options.warmupLines} untimed), ${Buffer.byteLength(line)}-byte body, --concurrency ${options.concurrency}; serve --role api; SQLite WAL synchronous=FULL`,
      '',
      `  bench:submit (autocannon, 64 connections)  ${submitRates.map((r) => r.toFixed(0)).join(' / ')} req/s`,
      ...rounds.map(
        (round, i) =>
          `  round ${i + 1}: barge submit --file  ${round.rps.toFixed(0)} req/s (${round.seconds.toFixed(1)} s), ratio ${(ratios[i] as number).toFixed(3)}, CLI peak RSS ${round.peakMb.toFixed(0)} MB`,
      ),
      '  stored cargo = map entries = lines: yes, every round',
      '',
      `  ratio bulk/submit, median of ${rounds.length}: ${ratio.toFixed(3)}  (goal >= ${GOAL_RATIO}: ${goal(ratio >= GOAL_RATIO)})`,
      `  CLI peak RSS: ${peakMb.toFixed(0)} MB  (goal < ${GOAL_RSS_MB} MB: ${goal(peakMb < GOAL_RSS_MB)})`,
      '',
    ].join('\n'),
  );
}

runMain('bench:bulk', main, 'stack');
