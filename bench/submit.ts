/**
 * bench:submit: how much of a bare HTTP server's throughput POST /cargo/load keeps while making
 * every 200 durable.
 *
 * 1. Builds the service, creates a project and key with the `barge` CLI in a temp directory, and
 *    starts `barge serve` as a child process on SQLite (WAL, synchronous=FULL), loopback only.
 * 2. Drives POST /cargo/load with autocannon (64 connections, warm-up, then a fixed duration).
 * 3. Stops the service, opens the SQLite file read-only and checks that the cargo table holds
 *    exactly the rows whose 200s the client received (and those very ids).
 * 4. Starts a bare node:http server that replays the recorded 200 (same headers, same body) and
 *    drives it the same way.
 * 5. Prints req/s, the ratio, p50/p99 latency and non-2xx counts of both.
 *
 * With `--db postgres://…` the service runs on a fresh schema of that database instead, and two
 * peers run after it (bench/peer-server.ts): the same durable submit built the usual way, Fastify
 * and barge's body schema with pg-boss `send`, and with BullMQ `add` on Redis (`--redis`, default
 * the local one). The report adds the service's ratio to the faster peer (goal: 2).
 *
 * The load generator runs in this process and shares the machine's cores with the server under
 * test, in both runs; that is part of the measured setup.
 *
 * Usage: npm run bench:submit -- [--duration 10] [--warmup 2] [--connections 64] [--no-build]
 *                                 [--role api|all] [--cpu-prof DIR] [--body text|cached|image]
 *                                 [--db postgres://… [--redis redis://127.0.0.1:6379]]
 * --body: the typical text request (default); `cached`, a 20 KB system prefix marked for prompt
 *        caching with a forced tool; `image`, a 1 MB base64 image. The report adds the server's
 *        CPU per KB of body, to compare the kinds per byte.
 * Env:   BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_DATABASE_URL, BENCH_REDIS_URL
 *        (flags win).
 * Exit:  1 when the durability check fails or the run breaks; the goals are reported, not enforced.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import autocannon, { type Client, type Instance, type Result } from 'autocannon';
import Database from 'better-sqlite3';
import { type BodyKind, submissionBody } from './lib/cargo.js';
import { adminQuery, freshDatabase } from './lib/database.js';
import { dropOnInterrupt, installCleanup, makeTempDir, removeTempDir, runMain } from './lib/lifecycle.js';
import { bounded, oneOf, postgresUrl } from './lib/options.js';
import { machineTicks, processTicks, TICKS_PER_SECOND } from './lib/proc.js';
import { bargeEnv, cpuProfFlags, ROOT, startChild, startServe, stopChild, urlLine } from './lib/processes.js';
import { goal, machineLine } from './lib/report.js';
import { percentile } from './lib/stats.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const BARE_SERVER = join(ROOT, 'bench/bare-server.ts');
const PEER_SERVER = join(ROOT, 'bench/peer-server.ts');
/** pg-boss's tables, in the bench's database (bench/peer-server.ts), dropped after its run. */
const PG_BOSS_SCHEMA = 'pgboss_bench';

const GOAL_RATIO = 0.65;
const GOAL_P99_MS = 20;
/** On PostgreSQL: the service's req/s against the faster of the two peers. */
const GOAL_PEER_RATIO = 2;
/** How long a child may take to start or to stop before it is killed and the run fails. */
const CHILD_TIMEOUT_MS = 15_000;
/** autocannon's own time limit, past the drain deadline: a safety net that normally never fires. */
const DRAIN_LIMIT_S = 15;

/** More than this much CPU taken by other processes or the hypervisor during a run, and the report says so. */
const NOISE_LIMIT_CORES = 0.1;

const CARGO_ID = /"cargo_id":"(crg_[0-9a-z]{26})"/;

// ---------------------------------------------------------------------------------------------
// Options

interface Options {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  build: boolean;
  /** `barge serve --role`: `api` measures the submit path alone, `all` adds the pipeline workers. */
  role: 'api' | 'all';
  /** Where the service writes a V8 CPU profile (node --cpu-prof), or null for none. */
  cpuProfDir: string | null;
  /** The service on a fresh schema of this PostgreSQL database, beside the peers; null: SQLite. */
  pgUrl: string | null;
  /** Where the BullMQ peer keeps its queue (with pgUrl only). */
  redisUrl: string;
  /** The request's kind (submissionBody). */
  body: BodyKind;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      role: { type: 'string', default: 'api' },
      db: { type: 'string' },
      redis: { type: 'string' },
      body: { type: 'string', default: 'text' },
    },
  });
  const env = process.env;
  return {
    // Bounded so a typo cannot start an hour-long run.
    seconds: bounded('duration', values.duration ?? env.BENCH_DURATION ?? '10', 1, 300, 'number'),
    warmupSeconds: bounded('warmup', values.warmup ?? env.BENCH_WARMUP ?? '2', 0, 60, 'number'),
    connections: bounded('connections', values.connections ?? env.BENCH_CONNECTIONS ?? '64', 1, 1024, 'number'),
    build: !values['no-build'],
    role: oneOf('role', values.role ?? 'api', ['api', 'all'] as const),
    cpuProfDir: values['cpu-prof'] ?? null,
    pgUrl: postgresUrl(values.db),
    redisUrl: values.redis ?? env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    body: oneOf('body', values.body ?? 'text', ['text', 'cached', 'image'] as const),
  };
}

// ---------------------------------------------------------------------------------------------
// Clean-up: the temp dir and every child go away on any exit, Ctrl-C included.

/** The load generator while it runs, for Ctrl-C to stop. */
let activeLoad: Instance | null = null;

/** Bounded in time whatever happens: a warm-up and a run per server, start-ups, drains and checks. */
function timeLimitMs(options: Options): number {
  const servers = options.pgUrl ? 4 : 2;
  return servers * ((options.seconds + options.warmupSeconds + DRAIN_LIMIT_S) * 1000 + 4 * CHILD_TIMEOUT_MS);
}

// ---------------------------------------------------------------------------------------------
// Child processes

/** The environment of every `barge` child: ours minus BARGE_* settings, plus the bench's. */
function serviceEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return bargeEnv({
    BARGE_DATABASE_URL: databaseUrl,
    BARGE_LOG_LEVEL: 'warn',
    // The limiter still runs on every request (its cost is part of the path) but never says 429.
    BARGE_RATE_LIMIT_MAX: '1000000000',
    HOST: '127.0.0.1',
  });
}

async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args, '--json'], {
    env,
    timeout: CHILD_TIMEOUT_MS,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// The request

/** The submission of this run (its kind by --body), with metadata and a webhook. */
let body: string | undefined;
function cargoBody(kind: BodyKind): string {
  body ??= submissionBody('https://hooks.example.com/barge/cargo-results', kind);
  return body;
}

interface Target {
  /** The server process, for its CPU time. */
  pid: number;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The response the bare server replays: what the service answered, minus per-connection headers. */
interface Recorded {
  headers: Record<string, string>;
  body: string;
}

async function recordOneResponse(target: Target): Promise<Recorded> {
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`sample request answered ${response.status}: ${body}`);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    // node:http writes these itself, for the service and the bare server alike.
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
  });
  return { headers, body };
}

// ---------------------------------------------------------------------------------------------
// Load

interface Load {
  /** 2xx per second inside the fixed window (responses of the drain are not counted). */
  rps: number;
  /** All 2xx, drain included: every one of them must be durable. */
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50: number;
  p99: number;
  /** cargo ids read from the 2xx bodies. */
  ids: string[];
  /** Cores busy during the window: the server, this process (the client), everything else. */
  cpu: CpuSplit | null;
}

/**
 * Drives `target` with `connections` keep-alive connections for `seconds`, then drains: each
 * connection sends nothing more but waits for the answer to its last request. autocannon's own
 * end would cut those requests off, and the server may still commit them, so the count of rows
 * could then exceed the count of 200s by up to one per connection. Draining keeps the two equal.
 */
async function drive(target: Target, connections: number, seconds: number): Promise<Load> {
  const clients: Client[] = [];
  const latencies: number[] = [];
  const ids: string[] = [];
  let inWindow = 0;
  let windowMs = 0;
  let draining = false;
  let cpu: CpuSplit | null = null;
  const started = performance.now();
  const cpuAtStart = cpuSample(target.pid);

  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: target.headers,
        body: target.body,
        connections,
        duration: seconds + DRAIN_LIMIT_S,
        // The run ends at the first sample tick after the drain; a short interval wastes little.
        sampleInt: 50,
        setupClient: (client) => clients.push(client),
        verifyBody: (body) => {
          const match = CARGO_ID.exec(body);
          if (match?.[1]) ids.push(match[1]);
          return true;
        },
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    activeLoad = instance;
    // Our own percentiles: autocannon's histogram rounds to whole milliseconds.
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status < 200 || status > 299) return;
      latencies.push(ms);
      if (!draining) inWindow++;
    });
    setTimeout(() => {
      draining = true;
      windowMs = performance.now() - started;
      cpu = cpuSplit(cpuAtStart, cpuSample(target.pid), windowMs);
      // autocannon ends a connection once it has made `responseMax` requests and seen the answers.
      for (const client of clients) client.responseMax = client.reqsMade;
    }, seconds * 1000);
  });
  activeLoad = null;

  return {
    rps: inWindow / (windowMs / 1000),
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ids,
    cpu,
  };
}

/** Warm-up (JIT, SQLite page cache, TCP connections), then the measured run. */
async function warmAndDrive(label: string, target: Target, options: Options): Promise<{ warmup: Load; run: Load }> {
  process.stderr.write(`${label}: warm-up ${options.warmupSeconds} s, then ${options.seconds} s\n`);
  const warmup =
    options.warmupSeconds > 0 ? await drive(target, options.connections, options.warmupSeconds) : emptyLoad();
  const run = await drive(target, options.connections, options.seconds);
  return { warmup, run };
}

function emptyLoad(): Load {
  return { rps: 0, ok: 0, non2xx: 0, errors: 0, timeouts: 0, p50: 0, p99: 0, ids: [], cpu: null };
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc). The client and the server share the cores, so where the CPU went
// explains a result; and any other process running on the machine spoils it, which this shows.

interface CpuSplit {
  server: number;
  /** The server's main thread alone: the event loop, the usual bottleneck of a Node server. */
  serverMain: number;
  client: number;
  /** Every other process: noise, unless it is near zero. */
  other: number;
  /** Interrupt and softirq time, charged to no process: mostly the loopback traffic itself. */
  irq: number;
  /** Time the hypervisor ran something else while this VM wanted the CPU: noise too. */
  steal: number;
}

interface CpuSample {
  /** Process (user, nice, system) and interrupt ticks of the whole machine (USER_HZ: 100 a second). */
  processes: number;
  irq: number;
  steal: number;
  server: number;
  serverMain: number;
  /** This process, autocannon included, in microseconds. */
  clientUs: number;
}

function cpuSample(serverPid: number): CpuSample | null {
  try {
    const { processes, irq, steal } = machineTicks();
    const server = processTicks(`/proc/${serverPid}/stat`);
    const serverMain = processTicks(`/proc/${serverPid}/task/${serverPid}/stat`);
    const usage = process.cpuUsage();
    return { processes, irq, steal, server, serverMain, clientUs: usage.user + usage.system };
  } catch {
    return null;
  }
}

function cpuSplit(start: CpuSample | null, end: CpuSample | null, windowMs: number): CpuSplit | null {
  if (!start || !end) return null;
  const seconds = windowMs / 1000;
  const server = (end.server - start.server) / TICKS_PER_SECOND / seconds;
  const serverMain = (end.serverMain - start.serverMain) / TICKS_PER_SECOND / seconds;
  const client = (end.clientUs - start.clientUs) / 1e6 / seconds;
  const processes = (end.processes - start.processes) / TICKS_PER_SECOND / seconds;
  const irq = (end.irq - start.irq) / TICKS_PER_SECOND / seconds;
  const steal = (end.steal - start.steal) / TICKS_PER_SECOND / seconds;
  return { server, serverMain, client, other: Math.max(0, processes - server - client), irq, steal };
}

// ---------------------------------------------------------------------------------------------
// Durability

interface Durability {
  rows: number;
  acknowledged: number;
  missing: number;
  duplicates: number;
  ok: boolean;
}

/** After the service has stopped: every acknowledged id is a row, and nothing else is. */
function checkDurability(stored: Set<string>, acknowledged: string[]): Durability {
  const unique = new Set(acknowledged);
  const missing = [...unique].filter((id) => !stored.has(id)).length;
  const duplicates = acknowledged.length - unique.size;
  return {
    rows: stored.size,
    acknowledged: acknowledged.length,
    missing,
    duplicates,
    ok: missing === 0 && duplicates === 0 && stored.size === acknowledged.length,
  };
}

/** The service's database: a SQLite file in the run's temp dir, or a fresh PostgreSQL schema. */
interface ServiceDatabase {
  url: string;
  /** The cargo ids stored, read once the service has stopped. */
  storedIds(): Promise<Set<string>>;
  drop(): Promise<void>;
}

async function serviceDatabase(options: Options, dir: string): Promise<ServiceDatabase> {
  if (options.pgUrl) {
    // Migrated here, as `barge serve` would on start, so the service's start-up is the same either way.
    const bench = await freshDatabase(options.pgUrl, 'barge-bench-');
    return {
      url: bench.url,
      storedIds: async () =>
        new Set((await bench.database.read.selectFrom('cargo').select('id').execute()).map((r) => r.id)),
      drop: () => bench.drop(),
    };
  }
  const path = join(dir, 'barge.sqlite');
  return {
    url: `sqlite:${path}`,
    storedIds: async () => {
      const sqlite = new Database(path, { readonly: true, fileMustExist: true });
      try {
        return new Set(sqlite.prepare('select id from cargo').pluck().all() as string[]);
      } finally {
        sqlite.close();
      }
    },
    drop: async () => {},
  };
}

// ---------------------------------------------------------------------------------------------
// The runs

async function benchService(
  options: Options,
  dir: string,
): Promise<{ load: Load; recorded: Recorded; durability: Durability }> {
  const database = await serviceDatabase(options, dir);
  const env = serviceEnv(database.url);
  await runCli(['project', 'create', 'bench'], env);
  const { key } = await runCli(['key', 'create', 'bench', '--name', 'bench'], env);
  if (typeof key !== 'string') throw new Error('`barge key create --json` printed no key');

  const service = await startServe({
    name: 'service',
    label: 'service',
    exitedWhen: 'before listening',
    cli: CLI,
    role: options.role,
    nodeFlags: cpuProfFlags(options.cpuProfDir),
    env,
    timeoutMs: CHILD_TIMEOUT_MS,
  });
  const target: Target = {
    pid: service.child.pid ?? 0,
    url: `${service.url}/cargo/load`,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: cargoBody(options.body),
  };
  const recorded = await recordOneResponse(target);
  const { warmup, run } = await warmAndDrive('service', target, options);

  const code = await stopChild(service.child, CHILD_TIMEOUT_MS);
  if (code !== 0) throw new Error(`the service exited with code ${code}`);
  const sampleId = CARGO_ID.exec(recorded.body)?.[1];
  const acknowledged = [...(sampleId ? [sampleId] : []), ...warmup.ids, ...run.ids];
  if (acknowledged.length !== 1 + warmup.ok + run.ok) {
    throw new Error('some 2xx response carried no cargo id');
  }
  const durability = checkDurability(await database.storedIds(), acknowledged);
  await database.drop();
  return { load: run, recorded, durability };
}

async function benchBare(options: Options, recorded: Recorded, body: string): Promise<Load> {
  return driveScript(options, 'bare', BARE_SERVER, { BENCH_BARE_RESPONSE: JSON.stringify(recorded) }, body);
}

/** A server of the bench's own (a script run as its own process), driven like the service. */
async function driveScript(
  options: Options,
  label: string,
  script: string,
  env: NodeJS.ProcessEnv,
  body: string,
): Promise<Load> {
  const { child, ready: url } = await startChild({
    name: label,
    label,
    exitedWhen: 'before listening',
    args: ['--import', 'tsx', script],
    env: { ...process.env, ...env },
    timeoutMs: CHILD_TIMEOUT_MS,
    ready: urlLine,
  });
  const target: Target = {
    pid: child.pid ?? 0,
    url: `${url}/cargo/load`,
    headers: { 'content-type': 'application/json' },
    body,
  };
  await recordOneResponse(target);
  const { run } = await warmAndDrive(label, target, options);
  await stopChild(child, CHILD_TIMEOUT_MS);
  return run;
}

type Peer = 'pg-boss' | 'bullmq';

/** One peer (bench/peer-server.ts) driven like the service, with the same body. */
async function benchPeer(options: Options, peer: Peer, body: string): Promise<Load> {
  const pgUrl = options.pgUrl ?? '';
  const dropSchema = () => adminQuery(pgUrl, `drop schema if exists ${PG_BOSS_SCHEMA} cascade`);
  const forget = peer === 'pg-boss' ? dropOnInterrupt(dropSchema) : () => {};
  try {
    const url = peer === 'pg-boss' ? pgUrl : options.redisUrl;
    return await driveScript(options, peer, PEER_SERVER, { BENCH_PEER: peer, BENCH_PEER_URL: url }, body);
  } finally {
    if (peer === 'pg-boss') {
      await dropSchema();
      forget();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function report(
  options: Options,
  runs: { service: Load; bare: Load; peers: [Peer, Load][] },
  durability: Durability,
): void {
  const { service, bare, peers } = runs;
  const columns: [string, Load][] = [['service', service], ['bare', bare], ...peers];
  const row = (name: string, cell: (load: Load) => string) =>
    `  ${name.padEnd(18)}${columns.map(([, load]) => cell(load).padStart(12)).join('')}`;
  const ms = (value: number) => value.toFixed(2);
  const ratio = service.rps / bare.rps;
  const database = options.pgUrl ? 'PostgreSQL (a fresh schema)' : 'SQLite WAL synchronous=FULL';
  const lines = [
    '',
    `bench:submit  ${new Date().toISOString()}`,
    machineLine(),
    `  POST /cargo/load, ${Buffer.byteLength(cargoBody(options.body))}-byte body, ${options.connections} connections, ` +
      `${options.seconds} s after ${options.warmupSeconds} s warm-up; serve --role ${options.role}; ${database}`,
    '  the load generator (autocannon, this process) shares the cores with the server in every run',
    ...(peers.length > 0
      ? ['  peers (bench/peer-server.ts): Fastify + the same body schema + pg-boss send / BullMQ add on Redis']
      : []),
    '',
    `  ${''.padEnd(18)}${columns.map(([name]) => name.padStart(12)).join('')}`,
    row('req/s', (l) => l.rps.toFixed(0)),
    row('p50 latency (ms)', (l) => ms(l.p50)),
    row('p99 latency (ms)', (l) => ms(l.p99)),
    row('2xx', (l) => String(l.ok)),
    row('non-2xx', (l) => String(l.non2xx)),
    row('errors (timeouts)', (l) => `${l.errors} (${l.timeouts})`),
    row('CPU server (cores)', (l) => cores(l.cpu?.server)),
    row('  on main thread', (l) => cores(l.cpu?.serverMain)),
    row('CPU client (cores)', (l) => cores(l.cpu?.client)),
    row('CPU irq (cores)', (l) => cores(l.cpu?.irq)),
    row(options.pgUrl ? 'CPU other (db)' : 'CPU other (cores)', (l) => cores(l.cpu?.other)),
    row('CPU steal (cores)', (l) => cores(l.cpu?.steal)),
    // Less sensitive to other load on the machine than req/s: what one request costs the server.
    row('server µs/request', (l) => perRequest(l, 'server')),
    row('  on main thread', (l) => perRequest(l, 'serverMain')),
    row('server µs/KB body', (l) => perKilobyte(l, Buffer.byteLength(cargoBody(options.body)))),
    '',
    `  ratio service/bare: ${ratio.toFixed(3)}  (goal >= ${GOAL_RATIO}: ${goal(ratio >= GOAL_RATIO)})`,
    `  service p99: ${ms(service.p99)} ms  (goal <= ${GOAL_P99_MS} ms: ${goal(service.p99 <= GOAL_P99_MS)})`,
  ];
  if (peers.length > 0) {
    const [fasterName, faster] = peers.reduce((a, b) => (b[1].rps > a[1].rps ? b : a));
    const peerRatio = service.rps / faster.rps;
    lines.push(
      `  ratio service/peer: ${peers.map(([name, load]) => `${name} ${(service.rps / load.rps).toFixed(2)}`).join(', ')}`,
      `  ratio to the faster peer: ${peerRatio.toFixed(2)}  (${fasterName}; goal >= ${GOAL_PEER_RATIO}: ${goal(peerRatio >= GOAL_PEER_RATIO)})`,
    );
  }
  lines.push(
    `  durability: ${durability.rows} cargo rows, ${durability.acknowledged} 2xx received (sample, warm-up and run), ` +
      `${durability.missing} acknowledged ids missing, ${durability.duplicates} duplicated: ${durability.ok ? 'OK' : 'FAILED'}`,
    '',
  );
  // On PostgreSQL, "other" is mostly the database's (and Redis's) own processes: part of the run.
  const noise = (load: Load) => (load.cpu ? (options.pgUrl ? 0 : load.cpu.other) + load.cpu.steal : 0);
  const noisy = Math.max(...columns.map(([, load]) => noise(load)));
  if (noisy > NOISE_LIMIT_CORES) {
    lines.push(
      `  WARNING: other processes or the hypervisor (steal) took up to ${noisy.toFixed(2)} cores during a run; ` +
        'the figures are not clean.',
      '',
    );
  }
  process.stdout.write(lines.join('\n'));
}

function perRequest(load: Load, part: 'server' | 'serverMain'): string {
  return load.cpu ? ((load.cpu[part] * 1e6) / load.rps).toFixed(0) : '-';
}

function perKilobyte(load: Load, bytes: number): string {
  return load.cpu ? ((load.cpu.server * 1e6) / load.rps / (bytes / 1024)).toFixed(1) : '-';
}

function cores(value: number | undefined): string {
  return value === undefined ? '-' : value.toFixed(2);
}

// ---------------------------------------------------------------------------------------------

/** The child runs dist/, so dist/ must be the source as it is now, not an older build. */
async function build(): Promise<void> {
  process.stderr.write('building (npm run build)\n');
  try {
    await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: ROOT, timeout: 120_000 });
  } catch (err) {
    // tsc reports on stdout, which the error message leaves out.
    process.stderr.write(String((err as { stdout?: string }).stdout ?? ''));
    throw new Error('npm run build failed (or pass --no-build to bench the existing dist/)');
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:submit', timeLimitMs(options), {
    onSignal: 'graceful',
    childTimeoutMs: CHILD_TIMEOUT_MS,
    interrupted: () => activeLoad?.stop(),
  });
  if (options.build) await build();
  const tempDir = makeTempDir('barge-bench-');

  const service = await benchService(options, tempDir);
  const bare = await benchBare(options, service.recorded, cargoBody(options.body));
  const peers: [Peer, Load][] = [];
  if (options.pgUrl) {
    for (const peer of ['pg-boss', 'bullmq'] as const)
      peers.push([peer, await benchPeer(options, peer, cargoBody(options.body))]);
  }
  report(options, { service: service.load, bare, peers }, service.durability);

  removeTempDir(tempDir);
  if (!service.durability.ok) process.exitCode = 1;
}

runMain('bench:submit', main, 'message');
