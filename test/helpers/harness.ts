/** Suite harnesses: per suite, a fresh database with the API and workers, or with `barge serve` children. */
import { after, before } from 'node:test';
import type { Config } from '../../src/config.js';
import { type Clock, systemClock } from '../../src/domain/clock.js';
import type { Role, Service } from '../../src/service.js';
import { startTestApp, type TestApp } from './app.js';
import type { Backend, TestDatabase } from './backends.js';
import { testWorker } from './pipeline.js';
import { assertBuildIsFresh, BargeProcess } from './serve.js';
import { freePort } from './wait.js';

/**
 * One suite's service over one backend, with its own setup and teardown: called inside a
 * `describe`, it registers a `before` that makes a fresh database and starts the API of a service
 * composed by createService on a loopback port, and an `after` that closes the workers made with
 * `worker()`, the API, and drops the database. Every suite that talks to the API starts this way.
 */
export interface Harness {
  /** The suite's database (valid once its `before` has run). */
  readonly db: TestDatabase;
  /** The suite's API server. */
  readonly app: TestApp;
  /** The workers of a service over the same database, closed with the suite. */
  worker(options?: Parameters<typeof testWorker>[2]): ReturnType<typeof testWorker>;
}

export function harness(backend: Backend, options: { clock?: Clock; config?: Partial<Config> } = {}): Harness {
  let db: TestDatabase | undefined;
  let app: TestApp | undefined;
  const workers: Service[] = [];
  before(async () => {
    db = await backend.create();
    app = await startTestApp(db.database, options);
  });
  after(async () => {
    for (const worker of workers.splice(0)) await worker.close();
    await app?.close();
    await db?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the harness is used before its suite started');
    return value;
  };
  return {
    get db() {
      return ready(db);
    },
    get app() {
      return ready(app);
    },
    async worker(workerOptions = {}) {
      const made = await testWorker(ready(db).database, options.clock ?? systemClock, {
        config: options.config,
        ...workerOptions,
      });
      workers.push(made.worker);
      return made;
    },
  };
}

/**
 * A suite of `barge serve` children over one backend: registers a `before` that checks the build
 * is fresh and makes a database, and an `after` that kills every child made with `spawn` and drops
 * the database.
 */
export interface ServeHarness {
  readonly db: TestDatabase;
  spawn(args: string[], env: Record<string, string>): BargeProcess;
  /**
   * `barge serve --role all` on a free loopback port over the suite's database, in production
   * mode with private callbacks allowed and svc-mock answering at once; `env` adds or overrides.
   */
  serveAll(env?: Record<string, string>): Promise<{ child: BargeProcess; url: string }>;
  /** The same with another role: a worker listens nowhere (its url is null). */
  serve(role: Role, env?: Record<string, string>): Promise<{ child: BargeProcess; url: string | null }>;
}

export function serveHarness(backend: Backend): ServeHarness {
  let db: TestDatabase | undefined;
  const children: BargeProcess[] = [];
  before(async () => {
    assertBuildIsFresh();
    db = await backend.create();
  });
  after(async () => {
    for (const child of children.splice(0)) if (child.alive) await child.stop('SIGKILL');
    await db?.drop();
  });
  const spawn = (args: string[], env: Record<string, string>) => {
    const child = new BargeProcess(args, env);
    children.push(child);
    return child;
  };
  const harness: ServeHarness = {
    get db() {
      if (db === undefined) throw new Error('the harness is used before its suite started');
      return db;
    },
    spawn,
    async serveAll(env = {}) {
      const { child, url } = await harness.serve('all', env);
      return { child, url: url as string };
    },
    async serve(role, env = {}) {
      const child = spawn(['serve', '--role', role, '--json'], {
        BARGE_DATABASE_URL: harness.db.url,
        BARGE_ENV: 'production',
        BARGE_ALLOW_PRIVATE_CALLBACKS: 'true',
        BARGE_LOG_LEVEL: 'warn',
        BARGE_MOCK_LATENCY_MS: '0',
        BARGE_BATCH_MAX_WAIT_MS: '0',
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        ...env,
      });
      const started = await child.started();
      return { child, url: started.url };
    },
  };
  return harness;
}
