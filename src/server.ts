import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { type Clock, systemClock } from './domain/clock.js';
import { buildApp } from './http/app.js';
import { defaultModelRouter } from './providers/registry.js';
import { createApiKey } from './store/api-keys.js';
import { insertCargo, type NewCargo } from './store/cargo.js';
import { type Database, openDatabase } from './store/database.js';
import { GroupCommitWriter } from './store/group-commit.js';
import { migrate } from './store/migrate.js';
import { countProjects, createProject } from './store/projects.js';
import { packageVersion } from './version.js';

export type Role = 'all' | 'api' | 'worker';

export interface Service {
  app: FastifyInstance | null;
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

  let app: FastifyInstance | null = null;
  let writer: GroupCommitWriter<NewCargo> | null = null;
  let url: string | null = null;
  if (role === 'all' || role === 'api') {
    const cargoWriter = new GroupCommitWriter<NewCargo>((rows) => insertCargo(database.db, rows), {
      intervalMs: config.commitIntervalMs,
      maxRows: 5000,
    });
    writer = cargoWriter;
    app = await buildApp({
      config,
      database,
      clock,
      models: defaultModelRouter(),
      writeCargo: (row) => cargoWriter.write(row),
      version: packageVersion(),
    });
    url = await app.listen({ host: config.host, port: config.port });
  }

  let closing: Promise<void> | null = null;
  return {
    app,
    database,
    url,
    close() {
      closing ??= (async () => {
        // Stop taking requests and let in-flight ones finish (their rows commit), then the rest.
        if (app) await app.close();
        if (writer) await writer.close();
        await database.close();
      })();
      return closing;
    },
  };
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
  if ((await countProjects(database.db)) > 0) return;
  const now = clock.now();
  const project = await createProject(database.db, 'default', now);
  if (project === 'slug_taken') return;
  const { key } = await createApiKey(database.db, {
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
      'Try: curl -H "X-API-Key: <key>" http://localhost:8080/health',
      '',
    ].join('\n'),
  );
}
