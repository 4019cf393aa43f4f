import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Config } from './config.js';
import { awsDeliveryDeps } from './delivery/aws/connection-access.js';
import { buildChannels, delivererSettings } from './delivery/registry.js';
import { type Clock, systemClock } from './domain/clock.js';
import { buildApp } from './http/app.js';
import { smtpMailer } from './mail/mailer.js';
import { newWorkerId, PipelineWorker } from './pipeline/worker.js';
import { buildProviders, defaultModelRouter } from './providers/registry.js';
import { createApiKey } from './store/api-keys.js';
import { insertCargo, type NewCargo } from './store/cargo.js';
import { findProjectConnection } from './store/connections.js';
import { type Database, openDatabase } from './store/database.js';
import { GroupCommitWriter } from './store/group-commit.js';
import { migrate } from './store/migrate.js';
import { NEW_CARGO_CHANNEL, notifyNewCargo } from './store/notify.js';
import { countProjects, createProject } from './store/projects.js';
import { packageVersion } from './version.js';

export type Role = 'all' | 'api' | 'worker';

export interface Service {
  app: FastifyInstance | null;
  worker: PipelineWorker | null;
  database: Database;
  /** The address the API listens on, when it does. */
  url: string | null;
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  role: Role;
  clock?: Clock;
  /** Where the first-start message with the development key goes. */
  announce?: (text: string) => void;
}

/** Opens the database, migrates, and runs the API and/or the workers of one process. */
export async function startService(options: StartOptions): Promise<Service> {
  const { config, role } = options;
  const clock = options.clock ?? systemClock;
  const database = openDatabase(config.databaseUrl);
  try {
    await migrate(database);
    if (config.env === 'development') await createDevelopmentProject(database, clock, options.announce);
  } catch (err) {
    await database.close();
    throw err;
  }

  const logger = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
  });

  let worker: PipelineWorker | null = null;
  let unlisten: (() => Promise<void>) | null = null;
  if (role === 'all' || role === 'worker') {
    const pipelineWorker = new PipelineWorker(
      {
        database,
        clock,
        providers: buildProviders(config, database, clock),
        settings: { ...config.pipeline, purgeChunk: 1000 },
        workerId: config.pipeline.workerId ?? newWorkerId(),
        log: logger.child({ component: 'pipeline' }),
      },
      {
        // With PostgreSQL, API processes wake workers by NOTIFY; the poll is only a safety net.
        idleMaxMs: database.dialect === 'postgres' ? 5_000 : 30_000,
        delivery: {
          channels: buildChannels(config, packageVersion(), {
            aws: awsDeliveryDeps(config),
            findConnection: (projectId, id) => findProjectConnection(database.read, projectId, id),
          }),
          settings: delivererSettings(config),
          shutdownGraceMs: 10_000,
        },
        mailer: smtpMailer(config.smtp),
      },
    );
    worker = pipelineWorker;
    worker.start();
    if (database.listen) unlisten = await database.listen(NEW_CARGO_CHANNEL, () => pipelineWorker.wake());
  }

  let app: FastifyInstance | null = null;
  let writer: GroupCommitWriter<NewCargo> | null = null;
  let url: string | null = null;
  if (role === 'all' || role === 'api') {
    const cargoWriter = new GroupCommitWriter<NewCargo>(
      async (rows) => {
        await insertCargo(database.write, rows);
        await notifyNewCargo(database);
        worker?.wake();
      },
      { intervalMs: config.commitIntervalMs, maxRows: 5000 },
    );
    writer = cargoWriter;
    app = await buildApp({
      config,
      database,
      clock,
      logger,
      models: defaultModelRouter(),
      writeCargo: (row) => cargoWriter.write(row),
      version: packageVersion(),
    });
    url = await app.listen({ host: config.host, port: config.port });
  }

  let closing: Promise<void> | null = null;
  return {
    app,
    worker,
    database,
    url,
    close() {
      closing ??= (async () => {
        // Stop taking requests and let in-flight ones commit, then finish or release worker leases.
        if (app) await closeApp(app);
        if (writer) await writer.close();
        if (unlisten) await unlisten();
        if (worker) await worker.stop();
        await database.close();
      })();
      return closing;
    },
  };
}

/**
 * Closes the HTTP server without waiting out keep-alive connections. Node closes only connections
 * that are idle when close() is called; one whose request was still in flight then stays open,
 * idle, until the client or the keep-alive timeout (72 s) drops it, and holds up the shutdown.
 */
async function closeApp(app: FastifyInstance): Promise<void> {
  const reap = setInterval(() => app.server.closeIdleConnections(), 100);
  try {
    await app.close();
  } finally {
    clearInterval(reap);
  }
}

/**
 * First start on an empty database in development: a `default` project and one key, printed once,
 * so a new user can call the API right away.
 */
async function createDevelopmentProject(
  database: Database,
  clock: Clock,
  announce: (text: string) => void = (text) => process.stdout.write(text),
): Promise<void> {
  if ((await countProjects(database.write)) > 0) return;
  const now = clock.now();
  const project = await createProject(database.write, 'default', now);
  if (project === 'slug_taken') return;
  const { key } = await createApiKey(database.write, {
    projectId: project.id,
    name: 'development',
    expiresAt: null,
    now,
  });
  announce(
    [
      '',
      'barge: first start on an empty database (BARGE_ENV=development).',
      "Created project 'default' and this API key. It is shown only once:",
      '',
      `    ${key}`,
      '',
      'Next: the README walks through loading a svc-mock cargo with it (POST /cargo/load).',
      '',
    ].join('\n'),
  );
}
