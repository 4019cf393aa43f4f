/**
 * bench:pipeline: how fast the workers turn pending cargo into stored results, and how much time
 * the service adds between a provider job's end and its results being retrievable.
 *
 * Every run uses svc-mock, mailbox-only cargo (no callbacks), a fresh database (a temp SQLite file
 * with the service's durable settings, or a fresh schema with --db postgres://...), and a real
 * `barge serve` child (the built dist/, as installed), listening on 127.0.0.1 only.
 *
 * - drain:   N cargo are inserted `pending` directly (insertCargo, the row shape POST /cargo/load
 *            writes) before the clock starts. Then `barge serve --role worker` with
 *            BARGE_MOCK_LATENCY_MS=0; the clock runs from its ready line to the last result stored.
 * - e2e:     the same N cargo submitted over HTTP (autocannon, --in-flight connections) to
 *            `barge serve --role all` while its workers run; from the first submit to the last
 *            result stored. Beside it, the same submission to `--role api` alone (submit-only rate).
 *            Also reports the added latency (below) under that load, where jobs end at once.
 * - latency: BARGE_MOCK_LATENCY_MS=2000, a smaller number of cargo over HTTP; per cargo, the stored
 *            result's created_at minus its mock job's ends_at (p50/p99/max). created_at is taken
 *            just before the commit that stores the result; that commit adds milliseconds.
 * - rss:     (--rss, alone) 1,000,000 cargo pending, then `barge serve --role all`; its RSS is
 *            sampled while it drains, for at most --rss-seconds; prints the peak (VmHWM).
 *
 * "Last result stored" is seen by polling the results table every 20 ms (SQLite: max(rowid), which
 * equals the row count because results are only ever appended; PostgreSQL: count(*)).
 *
 * Usage: npm run bench:pipeline -- [--n 100000] [--runs 2] [--only drain,e2e,latency]
 *                                  [--in-flight 64] [--latency-ms 2000] [--latency-n 20000]
 *                                  [--rss] [--rss-n 1000000] [--rss-seconds 120]
 *                                  [--db postgres://...] [--cpu-prof DIR] [--no-build] [--cli PATH]
 *                                  [--node-options=--max-old-space-size=128]
 *                                  [--provider anthropic|openai] [--projects 100] [--callgrind DIR]
 *        --provider: each drain run drains svc-mock and then the same N cargo routed to that
 *        provider, served by its wire-protocol emulator (test/helpers) on loopback with no latency
 *        (a batch ends at its first status poll); prints the provider's rate as a ratio of svc-mock's.
 *        The children run dist/src/cli/main.js, built first (`npm run build`; --no-build skips it),
 *        as an installed `barge` runs. --cli runs another entry point instead, e.g. another
 *        checkout's dist/src/cli/main.js or src/cli/main.ts (with tsx), to compare two versions.
 *        --projects: the drain's N cargo belong to that many projects, seeded in turn (fair forming
 *        takes each batch round robin across them); compare its rate with a run without it.
 *        --callgrind: each drain's worker runs under valgrind's callgrind, which writes
 *        DIR/callgrind.<pid>, and the run prints the instructions the worker ran, start-up
 *        included. What a cargo costs is the difference of two sizes' counts over theirs (--n 30000
 *        less --n 10000, over 20,000): the same however busy the machine, where its rate moves by
 *        10 %. About 50 times slower: --n 10000 takes a minute.
 * Env:   BENCH_PIPELINE_N, BENCH_PIPELINE_RUNS, BENCH_DATABASE_URL (flags win).
 * Exit:  1 when a run breaks or loses cargo; the goals are reported, not enforced.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import { sql } from 'kysely';
import { createApiKey } from '../src/store/admin/api-keys.js';
import { insertCargo } from '../src/store/cargo/insert.js';
import type { Database } from '../src/store/database.js';
import { startAnthropicEmulator } from '../test/helpers/anthropic-emulator.js';
import { startOpenAIEmulator } from '../test/helpers/openai-emulator.js';
import { METADATA, MODEL_INPUT, submissionBody } from './lib/cargo.js';
import {
  benchProject,
  type CargoContent,
  type CargoRoute,
  MOCK_ROUTE,
  pendingRow,
  withFreshDatabase,
} from './lib/database.js';
import { buildIfAsked, type EntryPoint, entryPoint } from './lib/entry-point.js';
import { installCleanup, runMain } from './lib/lifecycle.js';
import { bounded, modeList, postgresUrl } from './lib/options.js';
import { bytesWrittenBy, cpuSecondsOf, memoryOf } from './lib/proc.js';
import {
  bargeEnv,
  callgrindCommand,
  callgrindInstructions,
  cpuProfFlags,
  type Service,
  startServe,
  stopChild,
} from './lib/processes.js';
import { databaseKind, fmt, goal, log, machineLine, ms, spread } from './lib/report.js';
import { median, type Percentiles, percentiles } from './lib/stats.js';

const GOAL_DRAIN_PER_S = 20_000;
const GOAL_RSS_MB = 300;
const GOAL_ADDED_P99_MS = 1_000;
/** How long a child may take to start or to stop before it is killed and the run fails. */
const CHILD_TIMEOUT_MS = 30_000;
/** Pending cargo are inserted this many per transaction. */
const SEED_CHUNK = 10_000;
const POLL_MS = 20;
/** The temp dir of a run's SQLite file. */
const TEMP_PREFIX = 'barge-bench-pipeline-';

type Mode = 'drain' | 'e2e' | 'latency';
const MODES: readonly Mode[] = ['drain', 'e2e', 'latency'];

// ---------------------------------------------------------------------------------------------
// Options

interface Options {
  n: number;
  runs: number;
  only: Mode[];
  inFlight: number;
  latencyMs: number;
  latencyN: number;
  rss: boolean;
  rssN: number;
  rssSeconds: number;
  /** postgres://... or null for a temp SQLite file. */
  pgUrl: string | null;
  /** Where the worker child of drain runs writes a V8 CPU profile, or null. */
  cpuProfDir: string | null;
  /** Where the worker child of drain runs, run under callgrind, writes its counts, or null. */
  callgrindDir: string | null;
  /** The `barge` the children run (lib/entry-point.ts). */
  entry: EntryPoint;
  /** Extra node flags for every service child, e.g. `--max-old-space-size=128`. */
  nodeOptions: string[];
  /** Drain runs also drain through this provider's emulator. */
  provider: BenchProvider | null;
  /** The drain's cargo belong to this many projects, in turn. */
  projects: number;
}

type BenchProvider = 'anthropic' | 'openai';

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      n: { type: 'string' },
      runs: { type: 'string' },
      only: { type: 'string' },
      'in-flight': { type: 'string' },
      'latency-ms': { type: 'string' },
      'latency-n': { type: 'string' },
      rss: { type: 'boolean', default: false },
      'rss-n': { type: 'string' },
      'rss-seconds': { type: 'string' },
      db: { type: 'string' },
      'cpu-prof': { type: 'string' },
      callgrind: { type: 'string' },
      cli: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      'node-options': { type: 'string' },
      provider: { type: 'string' },
      projects: { type: 'string' },
    },
  });
  const provider = values.provider ?? 'mock';
  if (!['mock', 'anthropic', 'openai'].includes(provider)) throw new Error('--provider must be anthropic or openai');
  const env = process.env;
  const only = modeList(values.only, MODES);
  const pgUrl = postgresUrl(values.db);
  return {
    // Bounded so a typo cannot start an hour-long run or fill the disk.
    n: bounded('n', values.n ?? env.BENCH_PIPELINE_N ?? '100000', 1, 2_000_000),
    runs: bounded('runs', values.runs ?? env.BENCH_PIPELINE_RUNS ?? '2', 1, 10),
    only,
    inFlight: bounded('in-flight', values['in-flight'] ?? '64', 1, 1024),
    latencyMs: bounded('latency-ms', values['latency-ms'] ?? '2000', 1, 60_000),
    latencyN: bounded('latency-n', values['latency-n'] ?? '20000', 1, 200_000),
    rss: values.rss === true,
    rssN: bounded('rss-n', values['rss-n'] ?? '1000000', 1, 2_000_000),
    rssSeconds: bounded('rss-seconds', values['rss-seconds'] ?? '120', 5, 900),
    pgUrl,
    cpuProfDir: values['cpu-prof'] ?? null,
    callgrindDir: values.callgrind ?? null,
    entry: entryPoint(values.cli, values['no-build'] === true),
    nodeOptions: (values['node-options'] ?? '').split(' ').filter(Boolean),
    provider: provider === 'mock' ? null : (provider as BenchProvider),
    projects: bounded('projects', values.projects ?? '1', 1, 10_000),
  };
}

/** How long waiting for N results may take before the run counts as failed. */
function drainTimeoutMs(options: Options, n: number): number {
  // A minute, plus 1 ms a cargo (1,000 cargo/s): far below the goal.
  return (60_000 + n) * slowdown(options);
}

/** How long a child may take to start or stop. */
function childTimeoutMs(options: Options): number {
  return CHILD_TIMEOUT_MS * slowdown(options);
}

/** Under callgrind a child runs about 50 times slower. */
function slowdown(options: Options): number {
  return options.callgrindDir ? 100 : 1;
}

// ---------------------------------------------------------------------------------------------
// Clean-up: temp dirs, PostgreSQL schemas and every child go away on any exit, Ctrl-C included.

function timeLimitMs(options: Options): number {
  const perRun = (n: number) => 2 * (drainTimeoutMs(options, n) + 4 * childTimeoutMs(options));
  return options.rss
    ? perRun(options.rssN) + options.rssSeconds * 1000
    : options.runs * (3 * perRun(options.n) + perRun(options.latencyN));
}

// ---------------------------------------------------------------------------------------------
// Databases: a fresh, migrated one per run (lib/database.ts)

/**
 * Results stored so far. On SQLite, results rows are only ever appended (a conflicting insert adds
 * none), so max(rowid) is their count, read from the end of the b-tree instead of by a scan.
 */
async function resultCount(database: Database): Promise<number> {
  const query =
    database.dialect === 'sqlite'
      ? sql<{ n: number | null }>`select max(rowid) as n from results`
      : sql<{ n: number | null }>`select count(*) as n from results`;
  const { rows } = await query.execute(database.write);
  return Number(rows[0]?.n ?? 0);
}

/** Polls until `n` results are stored; returns performance.now() of the poll that saw them. */
async function waitForResults(database: Database, n: number, timeoutMs: number, onPoll?: () => void): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    onPoll?.();
    const count = await resultCount(database);
    const now = performance.now();
    if (count >= n) return now;
    if (now > deadline) throw new Error(`only ${count} of ${n} results stored after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Every cargo has its result and is completed: nothing was lost or failed on the way. */
async function checkAllCompleted(database: Database, n: number): Promise<void> {
  const rows = await database.write
    .selectFrom('cargo')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute();
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]));
  const { count } = await database.write
    .selectFrom('results')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  if (byStatus.completed !== n || Number(count) !== n) {
    throw new Error(
      `expected ${n} completed cargo and results; cargo by status ${JSON.stringify(byStatus)}, ${count} results`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The cargo: one typical submission, and the row POST /cargo/load writes for it

/** The HTTP body: mailbox only (no callback_url, no callback). */
const SUBMISSION = submissionBody(null);

// What load-cargo.ts stores for SUBMISSION: the shared settings, then the messages.
const REQUEST_JSON = JSON.stringify({
  requests: [{ modelInput: MODEL_INPUT }],
});
const CARGO: CargoContent = { request: REQUEST_JSON, metadata: JSON.stringify(METADATA), callbackUrl: null };

/** The columns that must match between a row the API wrote and pendingRow. */
const SHAPE_COLUMNS = [
  'model',
  'provider',
  'provider_model',
  'request',
  'request_count',
  'is_records',
  'request_bytes',
  'metadata',
  'result_ttl_seconds',
  'callback_url',
  'callback',
] as const;

/** Checks that the seeded rows of the drain run look exactly like what the API writes. */
async function checkRowShape(database: Database, projectId: string): Promise<string | null> {
  const apiRow = await database.write
    .selectFrom('cargo as c')
    .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
    .selectAll('c')
    .select(['q.request', 'q.metadata'])
    .limit(1)
    .executeTakeFirstOrThrow();
  const seeded = pendingRow(projectId, 0, CARGO);
  const differing = SHAPE_COLUMNS.filter((c) => apiRow[c] !== seeded[c]);
  return differing.length === 0 ? null : `seeded rows differ from the API's in: ${differing.join(', ')}`;
}

async function createBenchProject(database: Database): Promise<{ projectId: string; key: string }> {
  const now = Date.now();
  const projectId = await benchProject(database, now);
  const { key } = await createApiKey(database, { projectId, name: 'bench', expiresAt: null, now });
  return { projectId, key };
}

/** Inserts `n` pending cargo, SEED_CHUNK per transaction, each of the projects in turn; returns the time it took. */
async function insertPending(
  database: Database,
  projectIds: string | string[],
  n: number,
  route = MOCK_ROUTE,
): Promise<number> {
  const owners = typeof projectIds === 'string' ? [projectIds] : projectIds;
  const started = performance.now();
  for (let done = 0; done < n; done += SEED_CHUNK) {
    const now = Date.now();
    const rows = Array.from({ length: Math.min(SEED_CHUNK, n - done) }, (_, i) =>
      pendingRow(owners[(done + i) % owners.length] as string, now, CARGO, route),
    );
    await insertCargo(database, rows);
  }
  return performance.now() - started;
}

// ---------------------------------------------------------------------------------------------
// The service child

/** The environment of every `barge` child: ours minus BARGE_* settings, plus the bench's. */
function serviceEnv(databaseUrl: string, mockLatencyMs: number): NodeJS.ProcessEnv {
  return bargeEnv({
    BARGE_DATABASE_URL: databaseUrl,
    BARGE_LOG_LEVEL: 'warn',
    BARGE_MOCK_LATENCY_MS: String(mockLatencyMs),
    // The limiter still runs on every request but never says 429.
    BARGE_RATE_LIMIT_MAX: '1000000000',
    // The AWS SDK (object delivery) warns about node versions on every start; not ours to report.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    HOST: '127.0.0.1',
  });
}

/** Starts `barge serve --role <role> --json` and resolves once it printed its ready line. */
async function startService(
  options: Options,
  role: 'all' | 'api' | 'worker',
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
  under?: string[],
): Promise<Service> {
  return startServe({
    name: `barge serve --role ${role}`,
    label: role,
    exitedWhen: 'at start',
    cli: options.entry.cli,
    role,
    nodeFlags: [...options.nodeOptions, ...nodeFlags],
    env,
    cwd: options.entry.root,
    timeoutMs: childTimeoutMs(options),
    under,
  });
}

async function stopService(options: Options, service: Service): Promise<void> {
  const code = await stopChild(service.child, childTimeoutMs(options));
  if (code !== 0) throw new Error(`the service exited with code ${code}`);
}

// ---------------------------------------------------------------------------------------------
// Load over HTTP

/**
 * Submits `n` cargo with `connections` in flight. Resolves with performance.now() of the last
 * answer: autocannon itself reports the end only at its next sampling tick, up to a second later.
 */
async function submitAll(url: string, key: string, n: number, connections: number): Promise<number> {
  // `amount` (total requests, then stop) is not in bench/autocannon.d.ts; a variable passes it
  // through without widening the shared declaration.
  const options = {
    url: `${url}/cargo/load`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: SUBMISSION,
    connections,
    amount: n,
    timeout: 60,
  };
  let lastAnswerAt = Number.NaN;
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(options, (err, res) => (err ? reject(err) : resolve(res)));
    instance.on('response', () => {
      lastAnswerAt = performance.now();
    });
  });
  if (result['2xx'] !== n || result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `submission: ${result['2xx']} of ${n} answered 2xx (${result.non2xx} non-2xx, ${result.errors} errors)`,
    );
  }
  return lastAnswerAt;
}

// ---------------------------------------------------------------------------------------------
// Added latency: from a mock job's end to its result being stored

async function addedLatency(database: Database): Promise<Percentiles> {
  const rows = await database.write
    .selectFrom('results as r')
    .innerJoin('cargo as c', 'c.id', 'r.cargo_id')
    .innerJoin('batches as b', 'b.id', 'c.batch_id')
    .select(['r.created_at as stored', 'b.provider_state'])
    .execute();
  // svc-mock's job state is its end time.
  const endOf = (state: string | null) => (JSON.parse(state ?? '{}') as { endsAt: number }).endsAt;
  return percentiles(rows.map((r) => Number(r.stored) - endOf(r.provider_state)));
}

// ---------------------------------------------------------------------------------------------
// The runs

interface DrainRun {
  insertS: number;
  startupS: number;
  drainS: number;
  rate: number;
  workerHwmMb: number;
  /** CPU seconds the worker used while draining (start-up excluded). */
  workerCpuS: number;
  /** Bytes the worker wrote per cargo while draining. */
  workerBytesPerCargo: number;
  /** The instructions the worker ran, start-up included (--callgrind), or null. */
  instructions: number | null;
}

/** A provider's emulator for a drain run, and how cargo are routed to it. */
interface Emulated {
  route: CargoRoute;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

async function startEmulated(provider: BenchProvider): Promise<Emulated> {
  // Every batch ends at its first status poll (OpenAI's walks all four statuses there): the drain
  // measures barge, not the provider.
  if (provider === 'anthropic') {
    const emulator = await startAnthropicEmulator({ stepEveryRetrieves: 1 });
    return {
      route: { model: 'claude-haiku-4-5', provider, provider_model: 'claude-haiku-4-5-20251001' },
      env: { ANTHROPIC_API_KEY: emulator.apiKey, ANTHROPIC_BASE_URL: emulator.url },
      close: () => emulator.close(),
    };
  }
  const emulator = await startOpenAIEmulator({ endOnRetrieve: true });
  return {
    route: { model: 'gpt-4o-mini', provider, provider_model: 'gpt-4o-mini' },
    env: { OPENAI_API_KEY: emulator.apiKey, OPENAI_BASE_URL: emulator.baseURL },
    close: () => emulator.close(),
  };
}

async function drainRun(options: Options, run: number, provider: BenchProvider | null = null): Promise<DrainRun> {
  const emulated = provider === null ? null : await startEmulated(provider);
  try {
    return await drainRunOn(options, run, emulated, provider ?? 'svc-mock');
  } finally {
    await emulated?.close();
  }
}

async function drainRunOn(options: Options, run: number, emulated: Emulated | null, label: string): Promise<DrainRun> {
  return withFreshDatabase(options.pgUrl, TEMP_PREFIX, async (bench) => {
    const { projectId } = await createBenchProject(bench.database);
    const others = [];
    for (let i = 1; i < options.projects; i++)
      others.push(await benchProject(bench.database, Date.now(), `bench-${i}`));
    const insertMs = await insertPending(bench.database, [projectId, ...others], options.n, emulated?.route);
    const profile = cpuProfFlags(options.cpuProfDir);
    const spawnedAt = performance.now();
    // Pending rows are all there at start: partial batches go at once, not after the provider's wait.
    const env = emulated
      ? { ...serviceEnv(bench.url, 0), ...emulated.env, BARGE_BATCH_MAX_WAIT_MS: '0' }
      : serviceEnv(bench.url, 0);
    const under = options.callgrindDir ? callgrindCommand(options.callgrindDir) : undefined;
    const service = await startService(options, 'worker', env, profile, under);
    const startedAt = performance.now();
    const cpuAtStart = cpuSecondsOf(service.child.pid);
    const writtenAtStart = bytesWrittenBy(service.child.pid);
    const doneAt = await waitForResults(bench.database, options.n, drainTimeoutMs(options, options.n));
    const workerCpuS = cpuSecondsOf(service.child.pid) - cpuAtStart;
    const workerBytesPerCargo = (bytesWrittenBy(service.child.pid) - writtenAtStart) / options.n;
    const memory = memoryOf(service.child.pid);
    await stopService(options, service);
    await checkAllCompleted(bench.database, options.n);
    const instructions = options.callgrindDir
      ? callgrindInstructions(options.callgrindDir, service.child.pid as number)
      : null;
    const result = {
      insertS: insertMs / 1000,
      startupS: (startedAt - spawnedAt) / 1000,
      drainS: (doneAt - startedAt) / 1000,
      rate: options.n / ((doneAt - startedAt) / 1000),
      workerHwmMb: memory?.hwmMb ?? NaN,
      workerCpuS,
      workerBytesPerCargo,
      instructions,
    };
    log(
      `drain #${run} (${label}${options.projects > 1 ? `, ${options.projects} projects` : ''}): ${fmt(options.n)} cargo in ${result.drainS.toFixed(2)} s = ${fmt(result.rate)} cargo/s ` +
        `(worker CPU ${workerCpuS.toFixed(1)} s, wrote ${(workerBytesPerCargo / 1024).toFixed(1)} KiB a cargo, ` +
        `peak RSS ${result.workerHwmMb.toFixed(0)} MiB; ` +
        `seeded in ${result.insertS.toFixed(1)} s, worker start ${result.startupS.toFixed(2)} s; load average ${loadavg()[0]?.toFixed(1)})` +
        (instructions === null
          ? ''
          : `; the worker ran ${fmt(instructions)} instructions (callgrind, start-up included)`),
    );
    return result;
  });
}

interface E2eRun {
  submitS: number;
  totalS: number;
  rate: number;
  submitOnlyS: number;
  submitOnlyRate: number;
  added: Percentiles;
  shapeProblem: string | null;
}

async function e2eRun(options: Options, run: number): Promise<E2eRun> {
  const submitOnlyS = await submitOnlyRun(options);
  return withFreshDatabase(options.pgUrl, TEMP_PREFIX, async (bench) => {
    const { projectId, key } = await createBenchProject(bench.database);
    const service = await startService(options, 'all', serviceEnv(bench.url, 0));
    const startedAt = performance.now();
    // Watched from the start: the last result may be stored before autocannon reports its end.
    const stored = waitForResults(bench.database, options.n, drainTimeoutMs(options, options.n));
    stored.catch(() => {}); // awaited below, once the submission is done
    const submittedAt = await submitAll(service.url as string, key, options.n, options.inFlight);
    const doneAt = await stored;
    await stopService(options, service);
    await checkAllCompleted(bench.database, options.n);
    const result = {
      submitS: (submittedAt - startedAt) / 1000,
      totalS: (doneAt - startedAt) / 1000,
      rate: options.n / ((doneAt - startedAt) / 1000),
      submitOnlyS,
      submitOnlyRate: options.n / submitOnlyS,
      added: await addedLatency(bench.database),
      shapeProblem: await checkRowShape(bench.database, projectId),
    };
    log(
      `e2e #${run}: ${fmt(options.n)} cargo submitted in ${result.submitS.toFixed(2)} s, last result after ` +
        `${result.totalS.toFixed(2)} s = ${fmt(result.rate)} cargo/s end to end; submit-only (role api) ` +
        `${submitOnlyS.toFixed(2)} s = ${fmt(result.submitOnlyRate)} cargo/s; job end → result stored ` +
        `p50 ${ms(result.added.p50)} p99 ${ms(result.added.p99)} max ${ms(result.added.max)}`,
    );
    if (result.shapeProblem) log(`  WARNING: ${result.shapeProblem}`);
    return result;
  });
}

/** The same submission against `--role api` (no workers): what HTTP intake alone sustains. */
async function submitOnlyRun(options: Options): Promise<number> {
  return withFreshDatabase(options.pgUrl, TEMP_PREFIX, async (bench) => {
    const { key } = await createBenchProject(bench.database);
    const service = await startService(options, 'api', serviceEnv(bench.url, 0));
    const startedAt = performance.now();
    const submittedAt = await submitAll(service.url as string, key, options.n, options.inFlight);
    const seconds = (submittedAt - startedAt) / 1000;
    await stopService(options, service);
    return seconds;
  });
}

async function latencyRun(options: Options, run: number): Promise<Percentiles> {
  return withFreshDatabase(options.pgUrl, TEMP_PREFIX, async (bench) => {
    const { key } = await createBenchProject(bench.database);
    const service = await startService(options, 'all', serviceEnv(bench.url, options.latencyMs));
    await submitAll(service.url as string, key, options.latencyN, options.inFlight);
    await waitForResults(
      bench.database,
      options.latencyN,
      drainTimeoutMs(options, options.latencyN) + options.latencyMs,
    );
    await stopService(options, service);
    await checkAllCompleted(bench.database, options.latencyN);
    const added = await addedLatency(bench.database);
    log(
      `latency #${run}: ${fmt(options.latencyN)} cargo, mock jobs of ${options.latencyMs} ms; job end → result stored ` +
        `p50 ${ms(added.p50)} p99 ${ms(added.p99)} max ${ms(added.max)}`,
    );
    return added;
  });
}

interface RssRun {
  insertS: number;
  seconds: number;
  stored: number;
  drained: boolean;
  peakSampledMb: number;
  hwmMb: number;
  /** GET /health answer times while draining. */
  health: Percentiles;
}

/**
 * Asks GET /health, one request at a time, every 200 ms until stopped: how responsive the API of
 * a process stays while its workers drain a backlog. A request that fails or takes 30 s counts 30 s.
 */
function probeHealth(url: string): { stop(): Promise<Percentiles> } {
  const times: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      try {
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(30_000) });
        await response.arrayBuffer();
        times.push(performance.now() - started);
      } catch {
        times.push(30_000);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return percentiles(times);
    },
  };
}

async function rssRun(options: Options): Promise<RssRun> {
  return withFreshDatabase(options.pgUrl, TEMP_PREFIX, async (bench) => {
    const { projectId } = await createBenchProject(bench.database);
    log(`rss: inserting ${fmt(options.rssN)} pending cargo`);
    const insertMs = await insertPending(bench.database, projectId, options.rssN);
    const service = await startService(options, 'all', serviceEnv(bench.url, 0));
    const startedAt = performance.now();
    const prober = probeHealth(service.url as string);
    let peakSampledMb = 0;
    const sample = () => {
      peakSampledMb = Math.max(peakSampledMb, memoryOf(service.child.pid)?.rssMb ?? 0);
    };
    const sampler = setInterval(sample, 250);
    let drained = true;
    try {
      // The results count is polled at most every 20 ms; on a million rows max(rowid) stays cheap.
      await waitForResults(bench.database, options.rssN, options.rssSeconds * 1000, sample);
    } catch {
      drained = false;
    }
    clearInterval(sampler);
    sample();
    const seconds = (performance.now() - startedAt) / 1000;
    const stored = await resultCount(bench.database);
    const health = await prober.stop();
    const hwmMb = memoryOf(service.child.pid)?.hwmMb ?? NaN;
    await stopService(options, service);
    const result = { insertS: insertMs / 1000, seconds, stored, drained, peakSampledMb, hwmMb, health };
    log(
      `rss: ${fmt(stored)} of ${fmt(options.rssN)} results stored in ${seconds.toFixed(1)} s ` +
        `(${drained ? 'drained' : `stopped at the ${options.rssSeconds} s bound`}); peak RSS ${hwmMb.toFixed(0)} MiB ` +
        `(VmHWM; highest sample ${peakSampledMb.toFixed(0)} MiB); GET /health meanwhile p50 ${ms(health.p50)} ` +
        `p99 ${ms(health.p99)} max ${ms(health.max)}; seeded in ${result.insertS.toFixed(1)} s`,
    );
    return result;
  });
}

// ---------------------------------------------------------------------------------------------
// Report

function header(options: Options): string[] {
  return [
    '',
    `bench:pipeline  ${new Date().toISOString()}`,
    machineLine(),
    `  database: ${databaseKind(options.pgUrl)}; svc-mock, mailbox only`,
  ];
}

function report(options: Options, drains: DrainRun[], e2es: E2eRun[], latencies: Percentiles[]): void {
  const lines = header(options);
  if (drains.length > 0) {
    const medianRate = median(drains.map((d) => d.rate));
    lines.push(
      `  drain (${fmt(options.n)} pending, barge serve --role worker, BARGE_MOCK_LATENCY_MS=0):`,
      `    ${spread(
        drains.map((d) => d.rate),
        (v) => `${fmt(v)} cargo/s`,
      )}  (goal >= ${fmt(GOAL_DRAIN_PER_S)}: ${goal(medianRate >= GOAL_DRAIN_PER_S)})`,
      `    worker CPU time: ${spread(
        drains.map((d) => d.workerCpuS),
        (v) => `${v.toFixed(1)} s`,
      )}; written: ${spread(
        drains.map((d) => d.workerBytesPerCargo / 1024),
        (v) => `${v.toFixed(1)} KiB a cargo`,
      )}`,
      `    worker peak RSS: ${spread(
        drains.map((d) => d.workerHwmMb),
        (v) => `${v.toFixed(0)} MiB`,
      )}`,
    );
  }
  if (e2es.length > 0) {
    lines.push(
      `  end to end (${fmt(options.n)} over HTTP, ${options.inFlight} in flight, barge serve --role all):`,
      `    first submit → last result: ${spread(
        e2es.map((e) => e.totalS),
        (v) => `${v.toFixed(2)} s`,
      )} = ${spread(
        e2es.map((e) => e.rate),
        (v) => `${fmt(v)} cargo/s`,
      )}`,
      `    of which submitting: ${spread(
        e2es.map((e) => e.submitS),
        (v) => `${v.toFixed(2)} s`,
      )}`,
      `    submit only (role api): ${spread(
        e2es.map((e) => e.submitOnlyRate),
        (v) => `${fmt(v)} cargo/s`,
      )}`,
      `    job end → result stored under that load: p50 ${spread(
        e2es.map((e) => e.added.p50),
        ms,
      )}, p99 ${spread(
        e2es.map((e) => e.added.p99),
        ms,
      )}`,
      `    row shape of seeded cargo = API's: ${e2es.every((e) => e.shapeProblem === null) ? 'yes' : 'NO'}`,
    );
  }
  if (latencies.length > 0) {
    const p99 = median(latencies.map((l) => l.p99));
    lines.push(
      `  added latency (${fmt(options.latencyN)} over HTTP, BARGE_MOCK_LATENCY_MS=${options.latencyMs}): job end → result stored`,
      `    p50 ${spread(
        latencies.map((l) => l.p50),
        ms,
      )}, p99 ${spread(
        latencies.map((l) => l.p99),
        ms,
      )}, max ${spread(
        latencies.map((l) => l.max),
        ms,
      )}  (goal p99 <= ${ms(GOAL_ADDED_P99_MS)}: ${goal(p99 <= GOAL_ADDED_P99_MS)})`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

function reportRss(options: Options, rss: RssRun): void {
  const lines = header(options);
  lines.push(
    `  rss (${fmt(options.rssN)} pending, barge serve --role all, BARGE_MOCK_LATENCY_MS=0, sampled every 250 ms, at most ${options.rssSeconds} s):`,
    `    ${fmt(rss.stored)} results in ${rss.seconds.toFixed(1)} s (${rss.drained ? 'drained' : 'not drained: bounded'}) = ${fmt(rss.stored / rss.seconds)} cargo/s`,
    `    peak RSS (VmHWM): ${rss.hwmMb.toFixed(0)} MiB, highest sample ${rss.peakSampledMb.toFixed(0)} MiB  (goal < ${GOAL_RSS_MB} MB: ${goal(rss.hwmMb * 1.048576 < GOAL_RSS_MB)})`,
    `    GET /health while draining: p50 ${ms(rss.health.p50)}, p99 ${ms(rss.health.p99)}, max ${ms(rss.health.max)}`,
  );
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:pipeline', timeLimitMs(options), {
    onSignal: 'graceful',
    childTimeoutMs: childTimeoutMs(options),
  });
  await buildIfAsked(options.entry);
  if (options.rss) {
    reportRss(options, await rssRun(options));
    return;
  }
  const drains: DrainRun[] = [];
  const e2es: E2eRun[] = [];
  const latencies: Percentiles[] = [];
  const providerDrains: DrainRun[] = [];
  for (let run = 1; run <= options.runs; run++) {
    if (options.only.includes('drain')) drains.push(await drainRun(options, run));
    if (options.provider) {
      const drained = await drainRun(options, run, options.provider);
      providerDrains.push(drained);
      const mock = drains[drains.length - 1];
      if (mock)
        log(`drain #${run}: ${options.provider} at ${(drained.rate / mock.rate).toFixed(2)} of svc-mock's rate`);
    }
    if (options.only.includes('e2e')) e2es.push(await e2eRun(options, run));
    if (options.only.includes('latency')) latencies.push(await latencyRun(options, run));
  }
  report(options, drains, e2es, latencies);
  if (options.provider && providerDrains.length > 0) {
    const rates = providerDrains.map((d) => fmt(d.rate)).join(', ');
    const ratios = providerDrains.map((d, i) => (d.rate / (drains[i]?.rate ?? Number.NaN)).toFixed(2)).join(', ');
    const hwm = Math.max(...providerDrains.map((d) => d.workerHwmMb)).toFixed(0);
    log(
      `  ${options.provider} drain: ${rates} cargo/s; ratio to svc-mock: ${ratios}; peak RSS of the collecting worker ${hwm} MiB`,
    );
  }
  if (e2es.some((e) => e.shapeProblem !== null)) process.exitCode = 1;
}

runMain('bench:pipeline', main, 'stack');
