/**
 * The same suite runs on every database backend: a SQLite file (its writes on the write thread),
 * SQLite in memory (one connection that reads and writes: it catches code that mixes up the two),
 * and PostgreSQL when one is reachable at BARGE_TEST_DATABASE_URL (default: the local server).
 * Under CI the PostgreSQL leg is required, so a missing server fails the run instead of quietly
 * skipping half of it. Suites that start `barge` child processes need a database another process
 * can open, so they run on the file and on PostgreSQL (`backends({ childProcesses: true })`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';

export interface Backend {
  name: 'sqlite' | 'sqlite-memory' | 'postgres';
  /**
   * A fresh, migrated, empty database; `url` opens the same one from another process.
   * `migrateThrough` stops at an older migration (upgrade tests).
   */
  create(options?: CreateOptions): Promise<TestDatabase>;
}

export interface CreateOptions {
  migrateThrough?: string;
}

export interface TestDatabase {
  database: Database;
  /** BARGE_DATABASE_URL for a child process that should see this database. */
  url: string;
  /** PostgreSQL schema, passed to child processes as search_path. */
  schema?: string;
  drop(): Promise<void>;
}

export const PG_URL = process.env.BARGE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let pgReachable: Promise<boolean> | undefined;

async function checkPostgres(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    if (process.env.CI === 'true') {
      throw new Error(`PostgreSQL is required under CI but ${PG_URL} is not reachable: ${String(err)}`);
    }
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const sqlite: Backend = {
  name: 'sqlite',
  async create(options: CreateOptions = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'barge-test-'));
    const url = `sqlite:${join(dir, 'barge.sqlite')}`;
    const database = openDatabase(url);
    await migrate(database, { through: options.migrateThrough });
    return {
      database,
      url,
      async drop() {
        await database.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const sqliteMemory: Backend = {
  name: 'sqlite-memory',
  async create(options: CreateOptions = {}) {
    const database = openDatabase('sqlite::memory:');
    await migrate(database, { through: options.migrateThrough });
    return {
      database,
      get url(): string {
        throw new Error('an in-memory database cannot be opened by another process');
      },
      drop: () => database.close(),
    };
  },
};

const postgres: Backend = {
  name: 'postgres',
  async create(options: CreateOptions = {}) {
    const schema = `barge_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const database = openDatabase(PG_URL, { schema });
    await migrate(database, { through: options.migrateThrough });
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return {
      database,
      url: url.toString(),
      schema,
      async drop() {
        await database.close();
        const cleanup = new pg.Client({ connectionString: PG_URL });
        await cleanup.connect();
        await cleanup.query(`drop schema if exists ${schema} cascade`);
        await cleanup.end();
      },
    };
  },
};

/** The backends this run covers; use as `for (const backend of await backends())`. */
export async function backends(options: { childProcesses?: boolean } = {}): Promise<Backend[]> {
  pgReachable ??= checkPostgres();
  const local = options.childProcesses ? [sqlite] : [sqlite, sqliteMemory];
  return (await pgReachable) ? [...local, postgres] : local;
}
