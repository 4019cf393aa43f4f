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
 * The worker runs the built dist/ (`npm run build` first; --no-build skips it), as an installed
 * `barge` runs; --cli runs another entry point instead (lib/entry-point.ts), to compare versions.
 * Besides the rates it prints the CPU time a delivery costs the worker (all its threads, from 10 %
 * to 90 % of the deliveries) and a request costs the bare loop.
 *
 * Usage: npm run bench:webhook -- [--n 10000] [--runs 2] [--only pipeline,stored] [--per-host 32]
 *                                 [--db postgres://...] [--cpu-prof DIR] [--no-build] [--cli PATH]
 * Env:   BENCH_WEBHOOK_N, BENCH_WEBHOOK_RUNS, BENCH_DATABASE_URL (flags win).
 * Exit:  1 when a run breaks or a delivery is lost; the goals are reported, not enforced.
 */

import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { createWebhookAgent } from '../src/delivery/webhook/http-client.js';
import { webhookPayloadJson } from '../src/domain/envelope.js';
import { newId } from '../src/domain/ids.js';
import type { ModelInput } from '../src/domain/request-surface.js';
import { mockRespond } from '../src/providers/mock/responder.js';
import { insertCargo } from '../src/store/cargo/insert.js';
import type { Database } from '../src/store/database.js';
import { cargoAwaitingResults } from '../src/store/results/awaiting.js';
import { storeResults } from '../src/store/results/store.js';
import { benchProject, pendingRow, withFreshDatabase } from './lib/database.js';
import { buildIfAsked, type EntryPoint, entryPoint } from './lib/entry-point.js';
import { installCleanup, makeTempDir, runMain } from './lib/lifecycle.js';
import { bounded, modeList, postgresUrl } from './lib/options.js';
import { cpuSecondsOf } from './lib/proc.js';
import { bargeEnv, cpuProfFlags, type Service, startServe, stopChild, track } from './lib/processes.js';
import { databaseKind, fmt, goal, log, machineLine, ms, spread } from './lib/report.js';
import { median, type Percentiles, percentiles } from './lib/stats.js';

const GOAL_RATIO = 0.5;
const GOAL_P99_MS = 1000;
const CHILD_TIMEOUT_MS = 30_000;
/** Completion is polled this often; the end time itself is read from the rows (deliveries.ended_at). */
const POLL_MS = 100;
const SEED_CHUNK = 10_000;

type Mode = 'pipeline' | 'stored';
const MODES: readonly Mode[] = ['pipeline', 'stored'];

interface Options {
  /** The `barge` the worker runs (lib/entry-point.ts). */
  entry: EntryPoint;
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
      cli: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
    },
  });
  const env = process.env;
  const pgUrl = postgresUrl(values.db);
  const only = modeList(values.only, MODES);
  return {
    entry: entryPoint(values.cli, values['no-build'] === true),
    only,
    n: bounded('n', values.n ?? env.BENCH_WEBHOOK_N ?? '10000', 1, 200_000),
    runs: bounded('runs', values.runs ?? env.BENCH_WEBHOOK_RUNS ?? '2', 1, 10),
    perHost: bounded('per-host', values['per-host'] ?? '32', 1, 1024),
    pgUrl,
    cpuProfDir: values['cpu-prof'] ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Clean-up: children and temp dirs go on any exit, Ctrl-C included.

function timeLimitMs(options: Options): number {
  return options.runs * options.only.length * (4 * CHILD_TIMEOUT_MS + 2 * deliveryTimeoutMs(options.n));
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
  const dir = makeTempDir('barge-bench-receiver-');
  const file = join(dir, 'receiver.cjs');
  writeFileSync(file, RECEIVER_SOURCE);
  const child = track(fork(file, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
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
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Databases: a fresh, migrated one per run (lib/database.ts), and what is seeded into it

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

/**
 * pipeline: N cargo `pending`, for the worker's batcher. stored: N cargo with their results stored
 * and their deliveries due (storeResults, as the collector does, svc-mock's answers, 2,000 a
 * transaction), so the worker has only the deliveries to do.
 */
async function seed(database: Database, callbackUrl: string, n: number, mode: Mode): Promise<void> {
  const projectId = await benchProject(database, Date.now());
  const cargo = { request: REQUEST_JSON, metadata: METADATA, callbackUrl };
  for (let done = 0; done < n; done += SEED_CHUNK) {
    const now = Date.now();
    const rows = Array.from({ length: Math.min(SEED_CHUNK, n - done) }, () => pendingRow(projectId, now, cargo));
    if (mode === 'pipeline') {
      await insertCargo(database, rows);
      continue;
    }
    // Results are stored under a batch's lease, as the collector stores them.
    const lease = { batchId: newId('bat', now), workerId: 'bench-seed' };
    await database.write
      .insertInto('batches')
      .values({
        id: lease.batchId,
        provider: 'mock',
        provider_model: 'svc-mock',
        // Ended: the worker's poller leaves it alone; the lease is what storeResults checks.
        status: 'ended',
        job_id: `bench-${lease.batchId}`,
        cargo_count: rows.length,
        request_count: rows.length,
        padding_count: 0,
        request_bytes: 0,
        created_at: now,
        submitted_at: now,
        deadline_at: null,
        next_check_at: now + 86_400_000,
        canceled_at: null,
        ended_at: null,
        end_reason: null,
        locked_by: lease.workerId,
        locked_until: now + 86_400_000,
        last_error: null,
        updated_at: now,
      })
      .execute();
    for (const row of rows) {
      row.status = 'processing';
      row.batch_id = lease.batchId;
    }
    await insertCargo(database, rows);
    const input = (JSON.parse(REQUEST_JSON) as { requests: { modelInput: ModelInput }[] }).requests[0]?.modelInput;
    const outcome = mockRespond('svc-mock', JSON.stringify(input));
    if (!outcome.success) throw new Error('svc-mock failed the bench request');
    const response = JSON.stringify(outcome.response);
    // The cargo as the collector reads them.
    const awaiting = await cargoAwaitingResults(database, lease.batchId);
    for (let i = 0; i < awaiting.length; i += 2000) {
      const results = awaiting.slice(i, i + 2000).map((awaited) => ({
        cargo: awaited,
        success: true,
        response,
        errorMessage: null,
        nextStatus: 'callback_pending' as const,
      }));
      await storeResults(database, lease, results, Date.now());
    }
  }
}

/** When the last delivery was recorded as delivered (the worker's clock at its record). */
async function lastDeliveryEnded(database: Database): Promise<number> {
  const row = await database.write
    .selectFrom('deliveries')
    .select((eb) => eb.fn.max('ended_at').as('at'))
    .executeTakeFirstOrThrow();
  return Number(row.at);
}

async function deliveredCount(database: Database): Promise<number> {
  const row = await database.write
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'delivered')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---------------------------------------------------------------------------------------------
// The worker child: `barge serve --role worker`

function workerEnv(options: Options, databaseUrl: string): NodeJS.ProcessEnv {
  return bargeEnv({
    // The receiver is on loopback.
    BARGE_ALLOW_PRIVATE_CALLBACKS: 'true',
    BARGE_DATABASE_URL: databaseUrl,
    BARGE_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    BARGE_MOCK_LATENCY_MS: '0',
    BARGE_DELIVERY_PER_HOST: String(options.perHost),
  });
}

async function startWorker(entry: EntryPoint, env: NodeJS.ProcessEnv, nodeFlags: string[]): Promise<Service> {
  return startServe({
    name: 'the worker',
    label: 'worker',
    exitedWhen: 'at start',
    cli: entry.cli,
    role: 'worker',
    nodeFlags,
    env,
    cwd: entry.root,
    timeoutMs: CHILD_TIMEOUT_MS,
  });
}

// ---------------------------------------------------------------------------------------------
// The runs

interface Run {
  deliverySeconds: number;
  deliveryRate: number;
  latency: Percentiles;
  bareSeconds: number;
  bareRate: number;
  /** The worker's CPU time a delivery (all its threads), between 10 % and 90 % of the deliveries. */
  workerCpuUs: number;
  /** The bare loop's CPU time a request (this process). */
  bareCpuUs: number;
}

async function run(options: Options, receiver: Receiver, index: number, mode: Mode): Promise<Run> {
  return withFreshDatabase(options.pgUrl, 'barge-bench-webhook-', async (bench) => {
    await seed(bench.database, receiver.url, options.n, mode);
    await receiver.take();
    const profile = cpuProfFlags(options.cpuProfDir);
    const worker = await startWorker(options.entry, workerEnv(options, bench.url), profile);
    const deadline = Date.now() + deliveryTimeoutMs(options.n);
    // The worker's CPU time between 10 % and 90 % of the deliveries: what a delivery costs it in
    // its steady state (start-up and the last stragglers left out).
    const window: { count: number; cpuS: number }[] = [];
    for (;;) {
      const count = await deliveredCount(bench.database);
      const cpuS = cpuSecondsOf(worker.child.pid);
      if (window.length === 0 ? count >= options.n * 0.1 : window.length === 1 && count >= options.n * 0.9) {
        window.push({ count, cpuS });
      }
      if (count >= options.n) break;
      if (Date.now() > deadline) throw new Error(`only ${count} of ${options.n} deliveries done in time`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const [from, to] = window;
    const workerCpuUs =
      from && to && to.count > from.count ? ((to.cpuS - from.cpuS) * 1e6) / (to.count - from.count) : Number.NaN;
    const doneAt = await lastDeliveryEnded(bench.database);
    const code = await stopChild(worker.child, CHILD_TIMEOUT_MS);
    if (code !== 0) throw new Error(`the worker exited with code ${code}`);

    const arrivals = await receiver.take();
    const results = await bench.database.write
      .selectFrom('results as r')
      .innerJoin('cargo as c', 'c.id', 'r.cargo_id')
      .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
      .select(['r.cargo_id', 'r.created_at', 'r.success', 'r.response', 'r.error_message', 'q.metadata', 'c.status'])
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
    const firstAttempt = await bench.database.write
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
    const bareCpuAtStart = process.cpuUsage();
    const bareSeconds = await bareLoop(receiver.url, bodies, options.perHost);
    const bareCpu = process.cpuUsage(bareCpuAtStart);
    const bareCpuUs = (bareCpu.user + bareCpu.system) / options.n;
    const bareArrivals = await receiver.take();
    if (bareArrivals.size !== options.n) throw new Error(`bare loop: ${bareArrivals.size} of ${options.n} arrived`);

    const result = {
      deliverySeconds,
      deliveryRate: options.n / deliverySeconds,
      latency,
      bareSeconds,
      bareRate: options.n / bareSeconds,
      workerCpuUs,
      bareCpuUs,
    };
    log(
      `${mode} #${index}: delivered ${fmt(options.n)} in ${deliverySeconds.toFixed(2)} s = ${fmt(result.deliveryRate)}/s ` +
        `(stored → received: first ${ms(latency.min)}, p50 ${ms(latency.p50)}, p99 ${ms(latency.p99)}, max ${ms(latency.max)}` +
        `${mode === 'stored' ? ', with the worker start-up' : ''}); ` +
        `bare loop ${bareSeconds.toFixed(2)} s = ${fmt(result.bareRate)}/s; ratio ${(result.deliveryRate / result.bareRate).toFixed(2)}; ` +
        `CPU a delivery: worker ${workerCpuUs.toFixed(0)} µs, bare loop ${bareCpuUs.toFixed(0)} µs`,
    );
    return result;
  });
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

function report(options: Options, runs: Map<Mode, Run[]>): void {
  const lines = [
    '',
    `bench:webhook  ${new Date().toISOString()}`,
    machineLine(),
    `  database: ${databaseKind(options.pgUrl)}; ` +
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
        )}  (goal p99 <= ${ms(GOAL_P99_MS)}: ${goal(p99 <= GOAL_P99_MS)})`,
      );
    }
    lines.push(
      `    bare loop (undici request, same Agent settings, ${options.perHost} in flight): ${spread(
        list.map((r) => r.bareRate),
        (v) => `${fmt(v)}/s`,
      )}`,
      `    ratio delivery / bare: ${spread(ratios, (v) => v.toFixed(2))}  (goal >= ${GOAL_RATIO}: ${goal(median(ratios) >= GOAL_RATIO)})`,
      `    CPU a delivery: worker ${spread(
        list.map((r) => r.workerCpuUs),
        (v) => `${v.toFixed(0)} µs`,
      )}, bare loop ${spread(
        list.map((r) => r.bareCpuUs),
        (v) => `${v.toFixed(0)} µs`,
      )}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:webhook', timeLimitMs(options), { onSignal: 'immediate', childTimeoutMs: CHILD_TIMEOUT_MS });
  await buildIfAsked(options.entry);
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

runMain('bench:webhook', main, 'stack');
