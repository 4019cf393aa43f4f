import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Schema } from './schema.js';
import { writeThreadDialect } from './sqlite-write-thread.js';

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
   * PostgreSQL only: calls `onNotify` on every NOTIFY on `channel`, from any process, over a
   * dedicated connection that reconnects by itself. Resolves to an unsubscribe function.
   */
  listen?: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>;
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
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  for (const pragma of SQLITE_PRAGMAS) sqlite.pragma(pragma);
  const read = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
  const write =
    writeThread && path !== ':memory:'
      ? new Kysely<Schema>({ dialect: writeThreadDialect(path, SQLITE_PRAGMAS) })
      : read;
  return {
    read,
    write,
    dialect: 'sqlite',
    close: async () => {
      if (write !== read) await write.destroy();
      await read.destroy();
    },
  };
}

function openPostgres(url: string, options: OpenOptions): Database {
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
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  const listen = async (channel: string, onNotify: () => void) => {
    let client: pg.Client | null = null;
    let stopped = false;
    const connect = async (): Promise<void> => {
      const next = new pg.Client({ connectionString: url });
      next.on('notification', onNotify);
      next.on('error', () => {
        // Reconnect after a moment; wake once, in case a notification was lost meanwhile.
        next.end().catch(() => {});
        if (!stopped) setTimeout(() => connect().then(onNotify, () => {}), 1000).unref();
      });
      await next.connect();
      await next.query(`listen ${channel}`);
      client = next;
    };
    await connect();
    return async () => {
      stopped = true;
      await client?.end();
    };
  };
  return { read: db, write: db, dialect: 'postgres', listen, close: () => db.destroy() };
}
