/** createService: the one composition root of `barge serve`, the tests and the benches. */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { awsDeliveryDeps } from './delivery/aws/connection-access.js';
import { buildChannels, delivererSettings } from './delivery/registry.js';
import { DeliveryWorker } from './delivery/worker.js';
import { type Clock, systemClock } from './domain/clock.js';
import { pricesForCargo } from './domain/model-catalog.js';
import type { PriceLookup } from './domain/usage.js';
import { type Announce, firstStart } from './first-start.js';
import { buildApp, buildProbeServer } from './http/app.js';
import { createLogger } from './logger.js';
import { smtpMailer } from './mail/mailer.js';
import { registerBudgetGauge } from './metrics/budget-gauge.js';
import { prometheusMetrics } from './metrics/prometheus.js';
import { withProviderMetrics } from './metrics/provider-metrics.js';
import { registerQueueGauges } from './metrics/queue-gauges.js';
import { packageVersion } from './package-root.js';
import { DEFAULT_BUDGET_BYTES, ProviderBudgets } from './pipeline/byte-budget.js';
import { countCargoMoves } from './pipeline/context.js';
import { newWorkerId, PipelineWorker } from './pipeline/worker.js';
import { type Metrics, noMetrics } from './ports.js';
import { withCallDeadline } from './providers/call-deadline.js';
import { RealtimeRunner } from './providers/openai-compatible/runner.js';
import type { Provider } from './providers/provider.js';
import { buildProviders, enabledEndpoints } from './providers/registry.js';
import { findProjectConnection } from './store/admin/connections.js';
import { sealPlaintextWebhookSecrets } from './store/admin/projects.js';
import { cargoInsertStatements, cargoRowBytes, type NewCargo, refusedCargo } from './store/cargo/insert.js';
import { type Database, openDatabase, outageMessage } from './store/database.js';
import { GroupCommitWriter } from './store/group-commit.js';
import { migrate } from './store/migrate.js';
import { NEW_CARGO_CHANNEL, newCargoNotice, notifyResultsStored, RESULTS_STORED_CHANNEL } from './store/notify.js';
import { isDatabaseUnavailable, OUTAGE_RETRY_MS } from './store/outage.js';
import { realtimeQueue } from './store/realtime/queue.js';
import { reservedCargoStatements } from './store/spend-usage.js';
import { acceptedCargoStatements } from './store/storage-usage.js';

/**
 * Submission groups committing at once on PostgreSQL: one gathering rows while others are in
 * their round trips to the server (bench:submit --db, bench/RESULTS.md).
 */
const GROUPS_IN_FLIGHT_POSTGRES = 2;

/**
 * The one composition root: `barge serve`, the tests and the benches all build the service here,
 * so what they exercise is the real wiring. A process runs the API, the workers, or both; the
 * workers are the pipeline worker (batches) and the delivery worker (deliveries, the outbox),
 * side by side.
 */
export type Role = 'all' | 'api' | 'worker';

export interface ServiceDeps {
  config: Config;
  role: Role;
  /** An open, migrated database (tests); otherwise opened from the config, migrated, and closed with the service. */
  database?: Database;
  clock?: Clock;
  logger?: FastifyBaseLogger;
  metrics?: Metrics;
  /** Providers to use instead of (or besides) the configured ones, by name (tests). */
  providers?: Provider[];
  /** The prices results are costed at, instead of the built-in ones (tests). */
  prices?: PriceLookup;
  /** Where the API listens; default the config's host and port. */
  listen?: { host: string; port: number };
  /** Start the worker loops (default); false leaves them to runUntilIdle (tests with a manual clock). */
  startWorkers?: boolean;
  /** The longest a worker loop sleeps without a wake-up. */
  idleMaxMs?: number;
  /** Where the first-start message with the development key and secret goes (firstStartKeyAnnouncer). */
  announce?: Announce;
  /** Log to stderr instead of stdout (`serve --json` keeps stdout for its one JSON object). */
  logToStderr?: boolean;
  /** Log for a person (pino-pretty) instead of JSON lines: `serve` on a terminal. */
  prettyLogs?: boolean;
}

export interface Service {
  app: FastifyInstance | null;
  pipeline: PipelineWorker | null;
  delivery: DeliveryWorker | null;
  database: Database;
  /** The address the API listens on, when it does. */
  url: string | null;
  /**
   * Resolves once the database is prepared and the workers run: at once, unless the database did
   * not answer at start. Rejects when preparing it fails otherwise (logged); the process should end.
   */
  ready: Promise<void>;
  /** Starts the worker loops (when startWorkers was false). */
  start(): void;
  /** Runs every worker step until none has work (tests drive the workers with this and a manual clock). */
  runUntilIdle(): Promise<void>;
  close(): Promise<void>;
}

export async function createService(deps: ServiceDeps): Promise<Service> {
  const { config, role } = deps;
  const clock = deps.clock ?? systemClock;
  // The process's Prometheus registry, served at GET /metrics; a caller may pass its own sink.
  const prometheus = deps.metrics ? null : prometheusMetrics();
  const metrics: Metrics = deps.metrics ?? prometheus ?? noMetrics;
  const logger =
    deps.logger ??
    createLogger({ level: config.logLevel, fd: deps.logToStderr ? 2 : 1, pretty: deps.prettyLogs === true });
  const ownsDatabase = deps.database === undefined;
  const database =
    deps.database ??
    openDatabase(config.databaseUrl, {
      // An outage is logged once when it starts and once when it ends, not per failed request or step.
      onOutage: (event) =>
        event.state === 'down'
          ? logger.warn({ err: event.error.message }, outageMessage(event))
          : logger.warn({ down_ms: event.downMs }, outageMessage(event)),
    });
  const prepare = async () => {
    await migrate(database);
    // A key added since the last start seals the secrets stored before it (docs/security.md).
    if (config.secretKey) {
      const sealed = await sealPlaintextWebhookSecrets(database, config.secretKey);
      if (sealed > 0) logger.info({ projects: sealed }, 'sealed plaintext webhook signing secrets');
    }
    await firstStart(database, config, clock, logger, deps.announce);
  };
  // A database that does not answer at start is waited for, as one that goes away later is: the
  // process listens, answers 503 until it is prepared (startup-gate.ts), and prepares it and
  // starts the workers once it answers (preparedLater, below). Any other failure ends the start.
  let prepared = !ownsDatabase;
  let closing: Promise<void> | null = null;
  // Only a process that is waiting gets the gate: a hook on every request costs the hot path.
  const gate = () => (prepared ? {} : { prepared: () => prepared });
  if (ownsDatabase) {
    try {
      await prepare();
      prepared = true;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) {
        await database.close();
        throw err;
      }
    }
  }
  const log = (component: string) => logger.child({ component });
  // Other processes' writes wake the workers (Database.listen); the poll is only a safety net.
  const idleMaxMs = deps.idleMaxMs ?? (database.dialect === 'postgres' ? 5_000 : 30_000);
  const workerId = config.pipeline.workerId ?? newWorkerId();

  let pipeline: PipelineWorker | null = null;
  let delivery: DeliveryWorker | null = null;
  if (role === 'all' || role === 'worker') {
    // The openai-compatible provider's requests are rows this worker's runner sends.
    const endpoints = enabledEndpoints(config);
    const queue = realtimeQueue(database);
    const realtime =
      endpoints.size > 0
        ? new RealtimeRunner(endpoints.values(), {
            queue,
            clock,
            workerId,
            log: log('realtime'),
            metrics,
            idleMaxMs,
          })
        : null;
    const providers = await buildProviders(
      config,
      clock,
      realtime ? { queue, onEnqueued: (endpoint) => realtime.wake(endpoint) } : null,
    );
    for (const provider of deps.providers ?? []) providers.set(provider.name, provider);
    // A call past its deadline counts as a failed call in the metrics.
    const deadlineMs = config.pipeline.providerCallTimeoutMs;
    for (const [name, provider] of providers) {
      providers.set(name, withProviderMetrics(withCallDeadline(provider, deadlineMs), metrics));
    }
    const deliveryWorker = new DeliveryWorker({
      database,
      clock,
      workerId,
      log: log('delivery'),
      metrics,
      channels: buildChannels(config, packageVersion(), {
        aws: awsDeliveryDeps(config),
        findConnection: (projectId, id) => findProjectConnection(database, projectId, id),
        log: log('delivery'),
      }),
      settings: delivererSettings(config),
      mailer: smtpMailer(config.smtp),
      leaseMs: config.pipeline.leaseMs,
      idleMaxMs,
      shutdownGraceMs: 10_000,
      defaultMonthlyBudgetUsd: config.defaultMonthlyBudgetUsd,
    });
    delivery = deliveryWorker;
    pipeline = new PipelineWorker(
      {
        database,
        clock,
        providers,
        settings: { ...config.pipeline, purgeChunk: 1000 },
        workerId,
        log: log('pipeline'),
        metrics,
        budgets: {
          submissions: new ProviderBudgets(DEFAULT_BUDGET_BYTES),
          collections: new ProviderBudgets(DEFAULT_BUDGET_BYTES),
        },
        // Results are costed at the catalog's prices of the id each cargo was submitted as (svc-mock: 0).
        prices: deps.prices ?? ((cargo) => pricesForCargo(config.models, cargo)),
      },
      {
        idleMaxMs,
        shutdownGraceMs: 10_000,
        ...(realtime && { providerLoops: realtime }),
        onResultsStored: () => {
          deliveryWorker.wake();
          notifyResultsStored(database).catch((err: unknown) => {
            // In an outage the database reports it; other workers wake when their LISTEN is back.
            if (!isDatabaseUnavailable(err)) logger.warn({ err }, 'could not notify other workers');
          });
        },
      },
    );
  }
  const workers = [pipeline, delivery].filter((w) => w !== null);

  const unlisten: (() => Promise<void>)[] = [];
  let started = false;
  const start = async () => {
    if (started) return;
    started = true;
    for (const worker of workers) worker.start();
    if (database.listen && pipeline && delivery) {
      const [p, d] = [pipeline, delivery];
      // PostgreSQL: one connection for both channels; a SQLite file: any commit of another
      // process (an API process's new cargo, the CLI's redelivery) wakes both.
      unlisten.push(
        await database.listen({ [NEW_CARGO_CHANNEL]: () => p.wake(), [RESULTS_STORED_CHANNEL]: () => d.wake() }),
      );
    }
  };
  if (prepared && deps.startWorkers !== false) await start();

  let app: FastifyInstance | null = null;
  let writer: GroupCommitWriter<NewCargo> | null = null;
  let url: string | null = null;
  if (role === 'all' || role === 'api') {
    const cargoWriter = new GroupCommitWriter<NewCargo>(
      async (rows) => {
        // One transaction: the rows, then the storage budget's counters (store/storage-usage.ts),
        // last, so that groups committing at once wait for each other's lock on a project's
        // counters only for the end of their transactions, then the NOTIFY (PostgreSQL sends it at
        // the commit that makes the rows visible, where a NOTIFY of its own would cost a second
        // commit and WAL flush per group). Sent together: on a SQLite file the write thread runs
        // the whole transaction from one message.
        await database.writeAll([
          ...cargoInsertStatements(database, rows),
          ...acceptedCargoStatements(
            database,
            rows.map((row) => ({ projectId: row.project_id, bytes: cargoRowBytes(row), at: row.created_at })),
          ),
          // The spend budget's reservations, in the same transaction (store/spend-usage.ts).
          ...reservedCargoStatements(
            database,
            rows.map((row) => ({ projectId: row.project_id, reservedNusd: Number(row.reserved_nusd ?? 0) })),
          ),
          ...newCargoNotice(database),
        ]);
        countAccepted(metrics, rows);
        pipeline?.wake();
      },
      // Bounded by bytes too: a group of large bodies stays one modest transaction (and statement).
      {
        intervalMs: config.commitIntervalMs,
        maxRows: 5000,
        // SQLite has one writer: a second group would only queue behind the first.
        maxInFlight: database.dialect === 'postgres' ? GROUPS_IN_FLIGHT_POSTGRES : 1,
        maxBytes: 32 * 1024 * 1024,
        rowBytes: cargoRowBytes,
        onCommit: (rows, seconds) => {
          metrics.observe('barge_group_commit_rows', rows);
          metrics.observe('barge_group_commit_seconds', seconds);
        },
        // A request whose Idempotency-Key is taken is answered what the key was first used for.
        refusedRows: (rows) => refusedCargo(database, rows, clock.now()),
      },
    );
    writer = cargoWriter;
    app = await buildApp({
      config,
      database,
      clock,
      logger,
      writeCargo: (row) => cargoWriter.write(row),
      onCargoCreated: (routes) => {
        for (const route of routes) countCargoMoves(metrics, route, new Map([['pending', route.count]]));
        pipeline?.wake();
      },
      version: packageVersion(),
      // In this process: another process's delivery worker is woken by the commit (store/notify.ts).
      wakeDeliveries: () => delivery?.wake(),
      ...gate(),
      ...(prometheus ? { metrics: { registry: prometheus.registry, token: config.metrics.token } } : {}),
    });
    url = await app.listen(deps.listen ?? { host: config.host, port: config.port });
  } else if (prometheus && config.metrics.workerPort !== null) {
    // A worker has no API; it answers /health and /metrics on a port of its own.
    app = await buildProbeServer({
      database,
      registry: prometheus.registry,
      token: config.metrics.token,
      logger,
      ...gate(),
    });
    url = await app.listen({ host: config.host, port: config.metrics.workerPort });
  }
  if (prometheus) {
    registerQueueGauges(prometheus, database, clock);
    registerBudgetGauge(prometheus, { database, clock, defaultMonthlyBudgetUsd: config.defaultMonthlyBudgetUsd });
  }

  /** Prepares the database once it answers, retried as a worker step is; then starts the workers. */
  const preparedLater = async () => {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_RETRY_MS));
      if (closing) return;
      try {
        await prepare();
        break;
      } catch (err) {
        if (closing) return;
        if (!isDatabaseUnavailable(err)) throw err;
      }
    }
    if (closing) return;
    prepared = true;
    logger.info('database prepared');
    if (deps.startWorkers !== false) await start();
  };
  return {
    app,
    pipeline,
    delivery,
    database,
    url,
    ready: prepared
      ? Promise.resolve()
      : preparedLater().catch((err: unknown) => {
          logger.error({ err }, 'could not prepare the database');
          throw err;
        }),
    start() {
      void start();
    },
    async runUntilIdle() {
      for (;;) {
        let didWork = false;
        for (const worker of workers) didWork = (await worker.runOnce()) || didWork;
        if (!didWork) return;
      }
    },
    close() {
      closing ??= (async () => {
        // Stop taking requests and let in-flight ones commit, then finish or release worker leases.
        if (app) await closeApp(app);
        if (writer) await writer.close();
        for (const stop of unlisten) await stop();
        // Workers that never started (the database never answered) hold nothing to give back.
        if (prepared) for (const worker of workers) await worker.stop();
        if (ownsDatabase) await database.close();
      })();
      return closing;
    },
  };
}

/**
 * Closes the HTTP server without waiting out keep-alive connections. Node closes only connections
 * that are idle when close() is called; one whose request was still in flight then stays open,
 * idle, until the client or the keep-alive timeout (BARGE_REQUEST_TIMEOUT_MS) drops it, and
 * holds up the shutdown.
 */
async function closeApp(app: FastifyInstance): Promise<void> {
  const reap = setInterval(() => app.server.closeIdleConnections(), 100);
  try {
    await app.close();
  } finally {
    clearInterval(reap);
  }
}

/** Accepted cargo, counted by the provider and model routing chose. */
function countAccepted(metrics: Metrics, rows: NewCargo[]): void {
  const byRoute = new Map<string, { route: NewCargo; n: number }>();
  for (const row of rows) {
    const key = `${row.provider}\u0000${row.provider_model}`;
    const entry = byRoute.get(key) ?? { route: row, n: 0 };
    entry.n++;
    byRoute.set(key, entry);
  }
  for (const { route, n } of byRoute.values()) countCargoMoves(metrics, route, new Map([['pending', n]]));
}
