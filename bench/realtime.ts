/**
 * bench:realtime: batches over a real-time endpoint. The endpoint emulator (test/helpers/
 * realtime-emulator.ts) answers every request in 200 ms; the catalog gives its endpoint
 * max_concurrency 64, which allows at most 64 / 0.2 s = 320 requests a second. barge should keep
 * at least 90 % of that, steadily.
 *
 * 1. Builds the service; a fresh database (SQLite temp file, or `--db` PostgreSQL) and `barge serve
 *    --role all` with a catalog whose model routes to the emulator's endpoint.
 * 2. `--via seed` (the default): N cargo are inserted `pending` before the service starts (the rows
 *    POST /cargo/load writes), so what is measured is the runner alone; `--via http`: they are
 *    loaded through POST /cargo/load (64 in flight) while the runner sends, all on this machine.
 *    Then waits until every cargo has its result, sampling the emulator's answers and requests in
 *    flight every 100 ms.
 * 3. Reports the achieved rate from the first request the endpoint saw to the last answer, the
 *    per-second rates between (their median and lowest, the first and last seconds left out), the
 *    most requests the endpoint saw in flight at once, and the time until every result was stored.
 *
 * Usage: npm run bench:realtime -- [--cargo 5000] [--latency-ms 200] [--concurrency 64] [--via seed|http] [--db postgres://…] [--cpu-prof-dir <dir>] [--no-build]
 * Exit:  1 when a check fails (in flight above max_concurrency, a cargo without its answer) or the run breaks.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { storedRequestText } from '../src/domain/batch-requests.js';
import { createApiKey } from '../src/store/admin/api-keys.js';
import { insertCargo } from '../src/store/cargo/insert.js';
import { type RealtimeEmulator, startRealtimeEmulator } from '../test/helpers/realtime-emulator.js';
import { benchProject, pendingRow, withFreshDatabase } from './lib/database.js';
import { installCleanup, makeTempDir, runMain } from './lib/lifecycle.js';
import { bounded, oneOf, postgresUrl } from './lib/options.js';
import { bargeEnv, cpuProfFlags, ROOT, startServe, stopChild } from './lib/processes.js';
import { databaseKind, fmt, goal, log, machineLine } from './lib/report.js';
import { median } from './lib/stats.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const CHILD_TIMEOUT_MS = 60_000;
const GOAL_SHARE = 0.9;
const MODEL = 'llama-bench';
const SERVED = 'meta-llama/Llama-3.1-8B-Instruct';
const LOADERS = 64;

interface Options {
  cargo: number;
  latencyMs: number;
  concurrency: number;
  via: 'seed' | 'http';
  /** Where the service writes a V8 CPU profile (--cpu-prof-dir), if anywhere. */
  cpuProfDir: string | null;
  pgUrl: string | null;
  build: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      cargo: { type: 'string', default: '5000' },
      'latency-ms': { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '64' },
      via: { type: 'string', default: 'seed' },
      'cpu-prof-dir': { type: 'string' },
      db: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
    },
  });
  return {
    cargo: bounded('--cargo', values.cargo, 1, 1_000_000),
    latencyMs: bounded('--latency-ms', values['latency-ms'], 1, 60_000),
    concurrency: bounded('--concurrency', values.concurrency, 1, 4096),
    via: oneOf('--via', values.via, ['seed', 'http'] as const),
    cpuProfDir: values['cpu-prof-dir'] ?? null,
    pgUrl: postgresUrl(values.db),
    build: !values['no-build'],
  };
}

/** The emulator's answers and requests in flight, every 100 ms. */
class Sampler {
  readonly samples: { at: number; answered: number; inFlight: number }[] = [];
  firstRequestAt: number | null = null;
  lastAnswerAt: number | null = null;
  private readonly timer: NodeJS.Timeout;
  private lastAnswered = 0;

  constructor(emu: RealtimeEmulator) {
    this.timer = setInterval(() => {
      const at = performance.now();
      if (this.firstRequestAt === null && (emu.inFlight > 0 || emu.answered > 0)) this.firstRequestAt = at;
      if (emu.answered !== this.lastAnswered) this.lastAnswerAt = at;
      this.lastAnswered = emu.answered;
      this.samples.push({ at, answered: emu.answered, inFlight: emu.inFlight });
    }, 100);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The requests in flight at the endpoint, averaged over the samples from the first request to the last answer. */
  meanInFlight(): number {
    const start = this.firstRequestAt ?? 0;
    const end = this.lastAnswerAt ?? Number.POSITIVE_INFINITY;
    const within = this.samples.filter((s) => s.at >= start && s.at <= end);
    return within.reduce((sum, s) => sum + s.inFlight, 0) / Math.max(1, within.length);
  }

  /** Answers in each whole second from the first request, the first and last seconds left out. */
  perSecond(): number[] {
    const start = this.firstRequestAt;
    const end = this.lastAnswerAt;
    if (start === null || end === null) return [];
    const rates: number[] = [];
    const countAt = (t: number) => {
      let n = 0;
      for (const s of this.samples) if (s.at <= t) n = s.answered;
      return n;
    };
    for (let t = start + 1000; t + 1000 <= end; t += 1000) rates.push(countAt(t + 1000) - countAt(t));
    return rates;
  }
}

/** The question of cargo `i`: its text is the emulator's key for it. */
function modelInput(i: number) {
  return { max_tokens: 64, messages: [{ role: 'user' as const, content: `question ${i}` }] };
}

/** N cargo `pending` for MODEL, as POST /cargo/load stores them. */
async function seed(bench: { database: Parameters<typeof insertCargo>[0] }, projectId: string, count: number) {
  const route = { model: MODEL, provider: 'openai-compatible', provider_model: `gpu-1/${SERVED}` };
  for (let done = 0; done < count; done += 1000) {
    const now = Date.now();
    const rows = Array.from({ length: Math.min(1000, count - done) }, (_, i) =>
      pendingRow(
        projectId,
        now,
        { request: storedRequestText([{ modelInput: modelInput(done + i) }]), metadata: '{}', callbackUrl: null },
        route,
      ),
    );
    await insertCargo(bench.database, rows);
  }
}

async function loadAll(url: string, key: string, count: number): Promise<void> {
  let next = 0;
  const loader = async () => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const res = await fetch(`${url}/cargo/load`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ params: { model: MODEL, ...modelInput(i) } }),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST /cargo/load answered ${res.status}: ${text}`);
    }
  };
  await Promise.all(Array.from({ length: LOADERS }, loader));
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:realtime', 30 * 60_000, { onSignal: 'graceful', childTimeoutMs: CHILD_TIMEOUT_MS });
  if (options.build) await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
  const emu = await startRealtimeEmulator({ models: [SERVED], latencyMs: options.latencyMs });
  const dir = makeTempDir('barge-bench-realtime-');
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      endpoints: {
        'gpu-1': { base_url: emu.baseURL, max_concurrency: options.concurrency, timeout_ms: 30_000 },
      },
      models: [
        {
          id: MODEL,
          routes: [{ provider: 'openai-compatible', endpoint: 'gpu-1', model: SERVED }],
          prices_usd_per_mtok: { input: 0.05, output: 0.08 },
        },
      ],
    }),
  );
  const ceiling = options.concurrency / (options.latencyMs / 1000);
  try {
    const report = await withFreshDatabase(options.pgUrl, 'barge-bench-realtime-db-', async (bench) => {
      const projectId = await benchProject(bench.database, Date.now());
      const { key } = await createApiKey(bench.database, {
        projectId,
        name: 'bench',
        expiresAt: null,
        now: Date.now(),
      });
      if (options.via === 'seed') {
        log(`seeding ${options.cargo} pending cargo ...`);
        await seed(bench, projectId, options.cargo);
      }
      const service = await startServe({
        name: 'service',
        label: 'service',
        exitedWhen: 'before listening',
        cli: CLI,
        role: 'all',
        nodeFlags: cpuProfFlags(options.cpuProfDir),
        env: bargeEnv({
          BARGE_DATABASE_URL: bench.url,
          BARGE_LOG_LEVEL: 'warn',
          BARGE_RATE_LIMIT_MAX: '1000000000',
          BARGE_MODELS_FILE: catalog,
          BARGE_ALLOW_PRIVATE_CALLBACKS: 'true',
          HOST: '127.0.0.1',
        }),
        timeoutMs: CHILD_TIMEOUT_MS,
      });
      const sampler = new Sampler(emu);
      try {
        const started = performance.now();
        if (options.via === 'http') {
          log(`loading ${options.cargo} cargo (${LOADERS} in flight) ...`);
          await loadAll(service.url as string, key, options.cargo);
        }
        const loaded = performance.now();
        log('waiting for every result ...');
        const read = bench.database.read;
        for (;;) {
          const open = await read
            .selectFrom('cargo')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', 'in', ['pending', 'batched', 'processing'])
            .executeTakeFirstOrThrow();
          if (Number(open.n) === 0) break;
          if (performance.now() - started > 20 * 60_000) throw new Error(`${open.n} cargo still open after 20 minutes`);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        const stored = performance.now();
        sampler.stop();
        const failed = await read
          .selectFrom('results')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('success', '=', 0)
          .executeTakeFirstOrThrow();
        if (Number(failed.n) > 0) throw new Error(`${failed.n} cargo failed`);
        if (emu.answered !== options.cargo) {
          log(`note: the endpoint answered ${emu.answered} requests for ${options.cargo} cargo`);
        }
        const first = sampler.firstRequestAt ?? started;
        const last = sampler.lastAnswerAt ?? stored;
        return {
          loadS: (loaded - started) / 1000,
          sendS: (last - first) / 1000,
          storedS: (stored - started) / 1000,
          perSecond: sampler.perSecond(),
          maxInFlight: emu.maxInFlight,
          meanInFlight: sampler.meanInFlight(),
        };
      } finally {
        sampler.stop();
        await stopChild(service.child, CHILD_TIMEOUT_MS);
      }
    });
    const achieved = options.cargo / report.sendS;
    const steady = report.perSecond;
    const lowest = steady.length > 0 ? Math.min(...steady) : 0;
    const med = steady.length > 0 ? median(steady) : 0;
    process.stdout.write(
      [
        '',
        `bench:realtime  ${new Date().toISOString()}`,
        machineLine(),
        `  database: ${databaseKind(options.pgUrl)}; barge serve --role all; endpoint emulator in the bench process`,
        `  ${fmt(options.cargo)} cargo ${options.via === 'seed' ? 'inserted pending before the start' : `loaded through POST /cargo/load (${LOADERS} in flight) meanwhile`}; the endpoint answers in ${options.latencyMs} ms; max_concurrency ${options.concurrency}: at most ${fmt(ceiling)} req/s`,
        '',
        `  ${options.via === 'http' ? `loaded in ${report.loadS.toFixed(1)} s; ` : ''}every result stored ${report.storedS.toFixed(1)} s after the start`,
        `  achieved ${fmt(achieved)} req/s from the first request to the last answer (${report.sendS.toFixed(1)} s), ${((100 * achieved) / ceiling).toFixed(1)} % of ${fmt(ceiling)}`,
        `  per second: median ${fmt(med)}, lowest ${fmt(lowest)} (${steady.length} whole seconds: ${steady.join(' ')})`,
        `  in flight at the endpoint: at most ${report.maxInFlight}, on average ${report.meanInFlight.toFixed(1)} (max_concurrency ${options.concurrency})`,
        '',
        `  >= ${GOAL_SHARE * 100} % of ${fmt(ceiling)} req/s: ${goal(achieved >= GOAL_SHARE * ceiling)}; steadily (lowest second): ${goal(lowest >= GOAL_SHARE * ceiling)}`,
        '',
      ].join('\n'),
    );
    if (report.maxInFlight > options.concurrency) throw new Error('more requests in flight than max_concurrency');
  } finally {
    await emu.close();
  }
}

runMain('bench:realtime', main, 'stack');
