/**
 * bench:webhook: how fast finished cargo reach their webhook receiver, against the same HTTP
 * client posting the same bodies in a bare loop.
 *
 * - pipeline: N cargo with a callback_url are inserted `pending` (the row POST /cargo/load writes),
 *   then `barge serve --role worker` runs them through svc-mock (BARGE_MOCK_LATENCY_MS=0): one
 *   batch, results stored, N webhook deliveries to a loopback receiver that answers 200. The rate
 *   runs from the first attempt's start to the last delivery recorded (deliveries.ended_at); the
 *   latency of each cargo is the receiver's arrival time minus its results.created_at
 *   (p50/p99/max), so it also holds the time the results took to commit.
 * - stored: the same N cargo, but inserted with their results stored and their deliveries due
 *   (storeResults, as the collector writes them), before the worker starts: the deliveries alone,
 *   without the batch work running beside them. Its latencies include the worker's start-up.
 * - bare: the same N bodies (webhookPayloadJson of the stored results) POSTed by a plain loop with
 *   undici `request` over createWebhookAgent (the deliverer's own Agent settings), to the same
 *   receiver, with as many requests in flight as the deliverer may have open to one host
 *   (BARGE_DELIVERY_PER_HOST, default 32). No database, no signing: the ceiling of the HTTP part.
 *
 * The receiver runs in a child process of its own (a plain node:http server), so neither side
 * shares its event loop with it. Each run uses a fresh database (a temp SQLite file with the
 * service's durable settings, or a fresh schema with --db postgres://...).
 *
 * Usage: npm run bench:webhook -- [--n 10000] [--runs 2] [--only pipeline,stored] [--per-host 32]
 *                                 [--db postgres://...] [--cpu-prof DIR]
 * Env:   BENCH_WEBHOOK_N, BENCH_WEBHOOK_RUNS, BENCH_DATABASE_URL (flags win).
 * Exit:  1 when a run breaks or a delivery is lost; the goals are reported, not enforced.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { request } from 'undici';
import { createWebhookAgent } from '../src/delivery/webhook/http-client.js';
import type { ModelInput } from '../src/domain/cargo-request.js';
import { webhookPayloadJson } from '../src/domain/envelope.js';
import { newId } from '../src/domain/ids.js';
import { mockRespond } from '../src/providers/mock/responder.js';
import { insertCargo, type NewCargo } from '../src/store/cargo.js';
import { type Database, openDatabase } from '../src/store/database.js';
import { migrate } from '../src/store/migrate.js';
import { createProject } from '../src/store/projects.js';
import { storeResults } from '../src/store/results.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'src/cli/main.ts');

const GOAL_RATIO = 0.5;
const GOAL_P99_MS = 1000;
const CHILD_TIMEOUT_MS = 30_000;
/** Completion is polled this often; the end time itself is read from the rows (deliveries.ended_at). */
const POLL_MS = 100;
const SEED_CHUNK = 10_000;

type Mode = 'pipeline' | 'stored';
const MODES: readonly Mode[] = ['pipeline', 'stored'];

interface Options {
  n: number;
  runs: number;
  only: Mode[];
  perHost: number;
  pgUrl: string | null;
  cpuProfDir: string | null;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      n: { type: 'string' },
      runs: { type: 'string' },
      'per-host': { type: 'string' },
      only: { type: 'string' },
      db: { type: 'string' },
      'cpu-prof': { type: 'string' },
    },
  });
  const env = process.env;
  const pgUrl = values.db ?? env.BENCH_DATABASE_URL ?? null;
  if (pgUrl !== null && !/^postgres(ql)?:\/\//.test(pgUrl)) throw new Error('--db must be a postgres:// URL');
  const only = (values.only ?? MODES.join(',')).split(',').map((m) => m.trim());
  for (const mode of only) {
    if (!(MODES as readonly string[]).includes(mode))
      throw new Error(`--only takes ${MODES.join(', ')}; got '${mode}'`);
  }
  return {
    only: only as Mode[],
    n: bounded('n', values.n ?? env.BENCH_WEBHOOK_N ?? '10000', 1, 200_000),
    runs: bounded('runs', values.runs ?? env.BENCH_WEBHOOK_RUNS ?? '2', 1, 10),
    perHost: bounded('per-host', values['per-host'] ?? '32', 1, 1024),
    pgUrl,
    cpuProfDir: values['cpu-prof'] ?? null,
  };
}

function bounded(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`--${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Clean-up: children and temp dirs go on any exit, Ctrl-C included.

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

function installCleanup(options: Options): void {
  const interrupt = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping\n`);
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  const limitMs = options.runs * options.only.length * (4 * CHILD_TIMEOUT_MS + 2 * deliveryTimeoutMs(options.n));
  setTimeout(() => {
    process.stderr.write(`bench:webhook: time limit of ${Math.round(limitMs / 1000)} s exceeded\n`);
    process.exit(1);
  }, limitMs).unref();
}

/** A minute, plus 10 ms a delivery (100 deliveries/s): far below any useful rate. */
function deliveryTimeoutMs(n: number): number {
  return 60_000 + 10 * n;
}

// ---------------------------------------------------------------------------------------------
// The receiver: a child process answering 200 to every POST and noting when each cargo arrived

const RECEIVER_SOURCE = `
const { createServer } = require('node:http');
let arrivals = [];
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    arrivals.push(req.headers['idempotency-key'] ?? '', Date.now());
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'take') {
    process.send({ arrivals });
    arrivals = [];
  }
});
`;

interface Receiver {
  url: string;
  /** Arrivals since the last call: cargo id → epoch ms. */
  take(): Promise<Map<string, number>>;
  close(): void;
}

async function startReceiver(): Promise<Receiver> {
  const dir = mkdtempSync(join(tmpdir(), 'barge-bench-receiver-'));
  tempDirs.add(dir);
  const file = join(dir, 'receiver.cjs');
  writeFileSync(file, RECEIVER_SOURCE);
  const child = fork(file, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`receiver exited with code ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/hooks/barge`,
    take() {
      return new Promise((resolve) => {
        child.once('message', (m: { arrivals: (string | number)[] }) => {
          const map = new Map<string, number>();
          for (let i = 0; i < m.arrivals.length; i += 2) map.set(m.arrivals[i] as string, m.arrivals[i + 1] as number);
          resolve(map);
        });
        child.send('take');
      });
    },
    close() {
      child.kill('SIGKILL');
      children.delete(child);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Databases

interface BenchDatabase {
  url: string;
  database: Database;
  drop(): Promise<void>;
}

async function freshDatabase(options: Options): Promise<BenchDatabase> {
  if (options.pgUrl) {
    const pgUrl = options.pgUrl;
    const schema = `barge_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = async (query: string) => {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      try {
        await client.query(query);
      } finally {
        await client.end();
      }
    };
    await admin(`create schema ${schema}`);
    const database = openDatabase(pgUrl, { schema });
    await migrate(database);
    const url = new URL(pgUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return {
      url: url.toString(),
      database,
      async drop() {
        await database.close();
        await admin(`drop schema if exists ${schema} cascade`);
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'barge-bench-webhook-'));
  tempDirs.add(dir);
  const url = `sqlite:${join(dir, 'barge.sqlite')}`;
  const database = openDatabase(url);
  await migrate(database);
  return {
    url,
    database,
    async drop() {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
      tempDirs.delete(dir);
    },
  };
}

// A typical small request and its metadata (the webhook body echoes the metadata).
const REQUEST_JSON = JSON.stringify({
  requests: [
    {
      modelInput: {
        max_tokens: 512,
        messages: [{ role: 'user', content: 'Summarise the attached support ticket in two sentences, please.' }],
      },
    },
  ],
});
const METADATA = JSON.stringify({ ticket: 'T-48213', customer_id: 'cus_7f3a9c21', queue: 'support-tier1' });

function pendingRow(projectId: string, callbackUrl: string, now: number): NewCargo {
  return {
    id: newId('crg', now),
    project_id: projectId,
    status: 'pending',
    model: 'svc-mock',
    provider: 'mock',
    provider_model: 'svc-mock',
    request: REQUEST_JSON,
    request_count: 1,
    is_records: 0,
    request_bytes: Buffer.byteLength(REQUEST_JSON),
    metadata: METADATA,
    result_ttl_seconds: 30 * 86_400,
    callback_url: callbackUrl,
    callback: null,
    created_at: now,
    updated_at: now,
  };
}

/**
 * pipeline: N cargo `pending`, for the worker's batcher. stored: N cargo with their results stored
 * and their deliveries due (storeResults, as the collector does, svc-mock's answers, 2,000 a
 * transaction), so the worker has only the deliveries to do.
 */
async function seed(database: Database, callbackUrl: string, n: number, mode: Mode): Promise<void> {
  const project = await createProject(database.db, 'bench', Date.now());
  if (project === 'slug_taken') throw new Error('fresh database already has a bench project');
  for (let done = 0; done < n; done += SEED_CHUNK) {
    const now = Date.now();
    const rows = Array.from({ length: Math.min(SEED_CHUNK, n - done) }, () => pendingRow(project.id, callbackUrl, now));
    if (mode === 'stored') for (const row of rows) row.status = 'processing';
    await insertCargo(database.db, rows);
    if (mode === 'pipeline') continue;
    const input = (JSON.parse(REQUEST_JSON) as { requests: { modelInput: ModelInput }[] }).requests[0]?.modelInput;
    const outcome = mockRespond('svc-mock', input as ModelInput);
    if (!outcome.success) throw new Error('svc-mock failed the bench request');
    const response = JSON.stringify(outcome.response);
    for (let i = 0; i < rows.length; i += 2000) {
      const results = rows.slice(i, i + 2000).map((row) => ({
        cargoId: row.id,
        success: true,
        response,
        errorMessage: null,
        resultTtlSeconds: row.result_ttl_seconds as number,
        isRecords: false,
        nextStatus: 'callback_pending' as const,
        channels: ['webhook' as const],
      }));
      await storeResults(database.db, results, Date.now());
    }
  }
}

/** When the last delivery was recorded as delivered (the worker's clock at its record). */
async function lastDeliveryEnded(database: Database): Promise<number> {
  const row = await database.db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.max('ended_at').as('at'))
    .executeTakeFirstOrThrow();
  return Number(row.at);
}

async function deliveredCount(database: Database): Promise<number> {
  const row = await database.db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'delivered')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---------------------------------------------------------------------------------------------
// The worker child: `barge serve --role worker`

function workerEnv(options: Options, databaseUrl: string): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(
    ([name]) => !name.startsWith('BARGE_') && !['HOST', 'PORT', 'NODE_OPTIONS'].includes(name),
  );
  return {
    ...Object.fromEntries(inherited),
    BARGE_ENV: 'production',
    // The receiver is on loopback.
    BARGE_ALLOW_PRIVATE_CALLBACKS: 'true',
    BARGE_DATABASE_URL: databaseUrl,
    BARGE_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    BARGE_MOCK_LATENCY_MS: '0',
    BARGE_DELIVERY_PER_HOST: String(options.perHost),
  };
}

async function startWorker(env: NodeJS.ProcessEnv, nodeFlags: string[]): Promise<ChildProcess> {
  const args = [...nodeFlags, '--import', 'tsx', CLI, 'serve', '--role', 'worker', '--port', '0', '--json'];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the worker did not start in time')), CHILD_TIMEOUT_MS);
    child.once('exit', (code) => reject(new Error(`the worker exited with code ${code} at start`)));
    lines.on('line', (line) => {
      if (/^\{.*"role"/.test(line)) {
        clearTimeout(timer);
        resolve();
      } else {
        process.stderr.write(`[worker] ${line}\n`);
      }
    });
  });
  return child;
}

async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

// ---------------------------------------------------------------------------------------------
// The runs

interface Percentiles {
  min: number;
  p50: number;
  p99: number;
  max: number;
}

function percentiles(values: number[]): Percentiles {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
  return { min: sorted[0] ?? NaN, p50: at(0.5), p99: at(0.99), max: at(1) };
}

interface Run {
  deliverySeconds: number;
  deliveryRate: number;
  latency: Percentiles;
  bareSeconds: number;
  bareRate: number;
}

async function run(options: Options, receiver: Receiver, index: number, mode: Mode): Promise<Run> {
  const bench = await freshDatabase(options);
  try {
    await seed(bench.database, receiver.url, options.n, mode);
    await receiver.take();
    const profile = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [];
    const worker = await startWorker(workerEnv(options, bench.url), profile);
    const deadline = Date.now() + deliveryTimeoutMs(options.n);
    for (;;) {
      const count = await deliveredCount(bench.database);
      if (count >= options.n) break;
      if (Date.now() > deadline) throw new Error(`only ${count} of ${options.n} deliveries done in time`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const doneAt = await lastDeliveryEnded(bench.database);
    const code = await stopChild(worker);
    if (code !== 0) throw new Error(`the worker exited with code ${code}`);

    const arrivals = await receiver.take();
    const results = await bench.database.db
      .selectFrom('results as r')
      .innerJoin('cargo as c', 'c.id', 'r.cargo_id')
      .select(['r.cargo_id', 'r.created_at', 'r.success', 'r.response', 'r.error_message', 'c.metadata', 'c.status'])
      .execute();
    const notDelivered = results.filter((r) => r.status !== 'callback_delivered').length;
    const missing = results.filter((r) => !arrivals.has(r.cargo_id)).length;
    if (results.length !== options.n || notDelivered > 0 || missing > 0) {
      throw new Error(
        `${results.length} results, ${notDelivered} cargo not callback_delivered, ${missing} never reached the receiver`,
      );
    }
    const latency = percentiles(results.map((r) => (arrivals.get(r.cargo_id) as number) - Number(r.created_at)));
    // The deliverer's rate: from its first attempt to its last record (the bare loop's is timed
    // from its first request too); the time before it, storing the results, is in the latency.
    const firstAttempt = await bench.database.db
      .selectFrom('delivery_attempts')
      .select((eb) => eb.fn.min('started_at').as('at'))
      .executeTakeFirstOrThrow();
    const deliverySeconds = (doneAt - Number(firstAttempt.at)) / 1000;

    // The same bodies, the same client, the same receiver, as many in flight as one host gets.
    const bodies = results.map((r) => ({
      cargoId: r.cargo_id,
      body: webhookPayloadJson({
        cargoId: r.cargo_id,
        success: r.success === 1,
        responseJson: r.response,
        errorMessage: r.error_message,
        metadataJson: r.metadata,
      }),
    }));
    const bareSeconds = await bareLoop(receiver.url, bodies, options.perHost);
    const bareArrivals = await receiver.take();
    if (bareArrivals.size !== options.n) throw new Error(`bare loop: ${bareArrivals.size} of ${options.n} arrived`);

    const result = {
      deliverySeconds,
      deliveryRate: options.n / deliverySeconds,
      latency,
      bareSeconds,
      bareRate: options.n / bareSeconds,
    };
    log(
      `${mode} #${index}: delivered ${fmt(options.n)} in ${deliverySeconds.toFixed(2)} s = ${fmt(result.deliveryRate)}/s ` +
        `(stored → received: first ${ms(latency.min)}, p50 ${ms(latency.p50)}, p99 ${ms(latency.p99)}, max ${ms(latency.max)}` +
        `${mode === 'stored' ? ', with the worker start-up' : ''}); ` +
        `bare loop ${bareSeconds.toFixed(2)} s = ${fmt(result.bareRate)}/s; ratio ${(result.deliveryRate / result.bareRate).toFixed(2)}`,
    );
    return result;
  } finally {
    await bench.drop();
  }
}

async function bareLoop(url: string, bodies: { cargoId: string; body: string }[], inFlight: number): Promise<number> {
  const agent = createWebhookAgent({ timeoutMs: 30_000, connectionsPerHost: inFlight, blockPrivateAddresses: false });
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < bodies.length) {
      const { cargoId, body } = bodies[next++] as { cargoId: string; body: string };
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'bench', 'idempotency-key': cargoId },
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`bare loop: HTTP ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return seconds;
}

// ---------------------------------------------------------------------------------------------
// Report

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

function spread(values: number[], format: (v: number) => string): string {
  if (values.length === 1) return format(values[0] as number);
  return `${format(median(values))} (runs: ${values.map(format).join(', ')})`;
}

function report(options: Options, runs: Map<Mode, Run[]>): void {
  const lines = [
    '',
    `bench:webhook  ${new Date().toISOString()}`,
    `  machine: ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`,
    `  database: ${options.pgUrl ? 'PostgreSQL (fresh schema a run)' : 'SQLite temp file (WAL, synchronous=FULL)'}; ` +
      `${fmt(options.n)} svc-mock cargo with a callback_url, barge serve --role worker, ${options.perHost} per host`,
  ];
  for (const [mode, list] of runs) {
    const ratios = list.map((r) => r.deliveryRate / r.bareRate);
    const p99 = median(list.map((r) => r.latency.p99));
    lines.push(
      mode === 'pipeline'
        ? '  pipeline (pending cargo → svc-mock batch → results → webhooks):'
        : '  stored (results stored and deliveries due before the worker starts: the deliveries alone):',
      `    delivery (first attempt → last delivery recorded): ${spread(
        list.map((r) => r.deliveryRate),
        (v) => `${fmt(v)}/s`,
      )}`,
    );
    if (mode === 'pipeline') {
      lines.push(
        `    latency (result stored → receiver got it): p50 ${spread(
          list.map((r) => r.latency.p50),
          ms,
        )}, p99 ${spread(
          list.map((r) => r.latency.p99),
          ms,
        )}, max ${spread(
          list.map((r) => r.latency.max),
          ms,
        )}  (goal p99 <= ${ms(GOAL_P99_MS)}: ${p99 <= GOAL_P99_MS ? 'met' : 'NOT met'})`,
      );
    }
    lines.push(
      `    bare loop (undici request, same Agent settings, ${options.perHost} in flight): ${spread(
        list.map((r) => r.bareRate),
        (v) => `${fmt(v)}/s`,
      )}`,
      `    ratio delivery / bare: ${spread(ratios, (v) => v.toFixed(2))}  (goal >= ${GOAL_RATIO}: ${
        median(ratios) >= GOAL_RATIO ? 'met' : 'NOT met'
      })`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup(options);
  const receiver = await startReceiver();
  try {
    // Warm the receiver (and this process's client) up before anything is measured.
    await bareLoop(
      receiver.url,
      Array.from({ length: 2000 }, (_, i) => ({ cargoId: `w${i}`, body: '{}' })),
      options.perHost,
    );
    await receiver.take();
    const runs = new Map<Mode, Run[]>(options.only.map((mode) => [mode, []]));
    for (let i = 1; i <= options.runs; i++) {
      for (const mode of options.only) runs.get(mode)?.push(await run(options, receiver, i, mode));
    }
    report(options, runs);
  } finally {
    receiver.close();
  }
}

main().then(
  () => process.exit(),
  (err: unknown) => {
    process.stderr.write(`bench:webhook: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
