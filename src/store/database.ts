/** Opening the database: a SQLite file (writes on a worker thread) or a PostgreSQL pool, behind one interface. */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  type CompiledQuery,
  Kysely,
  type SqliteDatabase as KyselySqliteDatabase,
  PostgresDialect,
  SqliteDialect,
} from 'kysely';
import pg from 'pg';
import { type OutageEvent, OutageWatch } from './outage.js';
import type { Schema } from './schema.js';
import { type WriteThread, writeThreadDialect } from './sqlite-write-thread.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The store: where reads and writes go is decided here, once. On a SQLite file, `write` is a
 * connection in a worker thread (every write, transaction and claim), and `read` the main
 * connection, which never writes; on PostgreSQL and in-memory SQLite both are the same pool or
 * connection. Every store operation takes the one it needs.
 */
export interface Database {
  read: Kysely<Schema>;
  write: Kysely<Schema>;
  dialect: Dialect;
  /**
   * Runs the statements in one transaction, in order; for statements that need nothing of each
   * other's results (the group commit's). On a SQLite file they go to the write thread in one
   * message, where a transaction of Kysely calls waits for a turn of the event loop after each.
   * Resolves to the rows each statement returned (an UPDATE … RETURNING; none for the others).
   */
  writeAll(statements: readonly CompiledQuery[]): Promise<unknown[][]>;
  /** SQLite: the database file (its file system's free space is watched); null in memory and on PostgreSQL. */
  file: string | null;
  /**
   * Wakes a process's workers for what other processes wrote. PostgreSQL: calls the handler of a
   * channel on every NOTIFY on it, from any process, over one dedicated connection for all the
   * channels that reconnects by itself. A SQLite file: calls every handler within about 100 ms of
   * a commit by another connection (another process, the CLI), whatever it wrote: SQLite has no
   * channels (WriteThread.watch). Absent in memory and without the write thread (the CLI).
   * Resolves to an unsubscribe function.
   */
  listen?: (handlers: Record<string, () => void>) => Promise<() => Promise<void>>;
  /** PostgreSQL only: calls the handler each time the database answers again after an outage. */
  onRecovery?: (handler: () => void) => void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * SQLite file only: write on a worker thread (the default, for the server). The CLI writes on
   * its one connection instead: a thread costs more to start than its few statements take.
   */
  writeThread?: boolean;
  /** PostgreSQL only: the schema to work in (tests give each run its own). */
  schema?: string;
  /** PostgreSQL only: connections in the pool. */
  poolSize?: number;
  /**
   * PostgreSQL only: the database became unreachable (a restart, a failover, a proxy restart, a
   * network cut), or reachable again: called once at each end of an outage (default: stderr).
   */
  onOutage?: (event: OutageEvent) => void;
}

const PG_INT8 = 20;

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, options);
  return openSqlite(url.replace(/^sqlite:/, ''), options.writeThread ?? true);
}

// WAL + synchronous=FULL: a committed transaction survives power loss, and readers never block
// the writer. busy_timeout lets the CLI write while a server holds the file. Every connection to
// the file (the main one and the write thread's) gets the same settings.
const SQLITE_PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'busy_timeout = 5000', 'foreign_keys = ON'];

function openSqlite(path: string, writeThread: boolean): Database {
  if (path !== ':memory:') {
    // The file holds prompts, results, callback URLs and signing secrets: only its owner may read
    // it. SQLite gives the -wal and -shm files the database file's mode.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  }
  const sqlite = new SqliteDatabase(path);
  for (const pragma of SQLITE_PRAGMAS) sqlite.pragma(pragma);
  const read = new Kysely<Schema>({ dialect: new SqliteDialect({ database: preparedOnce(sqlite) }) });
  const thread = writeThread && path !== ':memory:' ? writeThreadDialect(path, SQLITE_PRAGMAS) : null;
  const write = thread ? new Kysely<Schema>({ dialect: thread }) : read;
  return {
    read,
    write,
    writeAll: thread
      ? (statements) => thread.runScript(statements)
      : (statements) => inOneTransaction(write, statements),
    dialect: 'sqlite',
    file: path === ':memory:' ? null : path,
    ...(thread ? { listen: async (handlers) => listenForCommits(thread, handlers) } : {}),
    close: async () => {
      if (write !== read) await write.destroy();
      await read.destroy();
    },
  };
}

/** Every handler, on each commit another connection made to the file; the unsubscribe function. */
function listenForCommits(thread: WriteThread, handlers: Record<string, () => void>): () => Promise<void> {
  const stop = thread.watch(() => {
    for (const handler of Object.values(handlers)) handler();
  });
  return async () => stop();
}

/** Each statement after the one before, in one transaction; the rows of each. */
async function inOneTransaction(db: Kysely<Schema>, statements: readonly CompiledQuery[]): Promise<unknown[][]> {
  if (statements.length === 0) return [];
  return db.transaction().execute(async (tx) => {
    const results: unknown[][] = [];
    for (const statement of statements) results.push((await tx.executeQuery(statement)).rows as unknown[]);
    return results;
  });
}

/** Statements kept prepared, at most (multi-row statements of each length have their own text). */
const PREPARED_MAX = 500;

/**
 * The main connection with each statement prepared once: Kysely's SQLite driver prepares every
 * query it runs, and the workers run the same few queries thousands of times (preparing was about
 * a tenth of the time the delivery loop spent reading). A statement still iterating (a stream) is
 * not shared: the next use prepares its own.
 */
function preparedOnce(sqlite: SqliteDatabase.Database): KyselySqliteDatabase {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      const known = statements.get(sql);
      if (known !== undefined && !known.busy) return known;
      const statement = sqlite.prepare(sql);
      if (statements.size >= PREPARED_MAX) statements.clear();
      statements.set(sql, statement);
      return statement;
    },
  };
}

/** LISTEN reconnects after a lost connection with this backoff, doubling up to the cap. */
const LISTEN_RETRY_MS = 500;
const LISTEN_RETRY_MAX_MS = 5_000;

function openPostgres(url: string, options: OpenOptions): Database {
  const report = options.onOutage ?? reportOutageToStderr;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Times are epoch milliseconds in bigint columns; they fit a JS number exactly.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const outage = new OutageWatch(() => pool.query('select 1'), report);
  // Without listeners, a connection dropped by the server (restart, failover, idle timeout) is an
  // unhandled 'error' event that ends the process. The pool discards a broken idle connection by
  // itself, and a query on a broken checked-out one fails (the request answers 503, the worker
  // step retries); the listeners keep the event from killing the process and tell the watch.
  pool.on('error', (err) => outage.failed(err));
  pool.on('connect', (client) => {
    client.on('error', (err) => outage.failed(err));
  });
  // Every checkout and query goes through here, so the watch sees an outage however it shows:
  // a refused connection, or a query on a connection that died under it.
  const watchedPool = {
    async connect() {
      const started = Date.now();
      const client = await pool.connect().catch((err: unknown) => {
        outage.failed(err, started);
        throw err;
      });
      return {
        query: ((...args: Parameters<typeof client.query>) => {
          const queried = Date.now();
          const result = (client.query as (...a: unknown[]) => unknown)(...args);
          if (result instanceof Promise) result.catch((err: unknown) => outage.failed(err, queried));
          return result;
        }) as typeof client.query,
        release: (destroy?: boolean | Error) => client.release(destroy),
      };
    },
    end: () => pool.end(),
  };
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: watchedPool }) });

  /**
   * One dedicated LISTEN connection for the given channels, which reconnects with backoff until
   * it works, however long the outage, and at once when the watch sees the database answer again.
   */
  const listen = async (handlers: Record<string, () => void>) => {
    const channels = Object.keys(handlers);
    const onNotify = (message: { channel: string }) => handlers[message.channel]?.();
    // After a reconnect every listener wakes once, in case a notification was missed meanwhile.
    const wakeAll = () => {
      for (const handler of Object.values(handlers)) handler();
    };
    let client: pg.Client | null = null;
    let connecting = false;
    let stopped = false;
    let lostOnce = false;
    let delay = LISTEN_RETRY_MS;
    let timer: NodeJS.Timeout | null = null;
    const connect = async (): Promise<void> => {
      const next = new pg.Client({ connectionString: url });
      next.on('notification', onNotify);
      next.on('error', (err) => lost(next, err));
      try {
        await next.connect();
        for (const channel of channels) await next.query(`listen ${channel}`);
      } catch (err) {
        next.end().catch(() => {});
        throw err;
      }
      if (stopped) {
        await next.end();
        return;
      }
      client = next;
      delay = LISTEN_RETRY_MS;
      if (lostOnce) wakeAll();
    };
    const lost = (which: pg.Client, err: Error) => {
      which.end().catch(() => {});
      if (client !== which) return;
      client = null;
      lostOnce = true;
      outage.failed(err);
      retry(delay);
    };
    const retry = (after: number) => {
      if (timer) clearTimeout(timer);
      timer = null;
      if (stopped || client || connecting) return;
      timer = setTimeout(() => {
        timer = null;
        connecting = true;
        connect()
          .catch(() => {
            delay = Math.min(delay * 2, LISTEN_RETRY_MAX_MS);
          })
          .finally(() => {
            connecting = false;
            if (!client) retry(delay);
          });
      }, after);
      timer.unref();
    };
    outage.onRecovery(() => retry(0));
    await connect();
    return async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await client?.end();
    };
  };
  return {
    read: db,
    write: db,
    writeAll: (statements) => inOneTransaction(db, statements),
    dialect: 'postgres',
    file: null,
    listen,
    onRecovery: (handler) => outage.onRecovery(handler),
    close: async () => {
      outage.close();
      await db.destroy();
    },
  };
}

/** Without a logger (the CLI), an outage is told on stderr, one line when it starts and one when it ends. */
function reportOutageToStderr(event: OutageEvent): void {
  process.stderr.write(`barge: ${outageMessage(event)}\n`);
}

/** The one wording of an outage's start and end, for every logger. */
export function outageMessage(event: OutageEvent): string {
  return event.state === 'down'
    ? `database unreachable (${event.error.message}); requests answer 503 and workers retry until it answers`
    : `database reachable again after ${(event.downMs / 1000).toFixed(1)} s`;
}
