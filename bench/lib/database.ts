/**
 * The database of a bench run: a fresh, migrated one per run (a temp SQLite file with the
 * service's durable settings, or a fresh schema on PostgreSQL), the bench project, and the cargo
 * row POST /cargo/load writes, for seeding pending cargo directly.
 */
import { join } from 'node:path';
import pg from 'pg';
import { newId } from '../../src/domain/ids.js';
import { createProject } from '../../src/store/admin/projects.js';
import type { NewCargo } from '../../src/store/cargo/insert.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { dropOnInterrupt, makeTempDir, removeTempDir } from './lifecycle.js';

export interface BenchDatabase {
  /** BARGE_DATABASE_URL for the service child. */
  url: string;
  /** The bench's own connection: seeding, polling, final checks. */
  database: Database;
  drop(): Promise<void>;
}

/** A fresh schema on `pgUrl`, or with null a temp SQLite file in a dir named `<sqlitePrefix>…`. */
export async function freshDatabase(pgUrl: string | null, sqlitePrefix: string): Promise<BenchDatabase> {
  return pgUrl ? freshPostgres(pgUrl) : freshSqlite(sqlitePrefix);
}

/** Runs `use` on a fresh database (as freshDatabase), and drops the database however `use` ends. */
export async function withFreshDatabase<T>(
  pgUrl: string | null,
  sqlitePrefix: string,
  use: (bench: BenchDatabase) => Promise<T>,
): Promise<T> {
  const bench = await freshDatabase(pgUrl, sqlitePrefix);
  try {
    return await use(bench);
  } finally {
    await bench.drop();
  }
}

async function freshSqlite(prefix: string): Promise<BenchDatabase> {
  const dir = makeTempDir(prefix);
  const url = `sqlite:${join(dir, 'barge.sqlite')}`;
  const database = openDatabase(url);
  await migrate(database);
  return {
    url,
    database,
    async drop() {
      await database.close();
      removeTempDir(dir);
    },
  };
}

/** One statement on its own connection to `pgUrl` (schemas made and dropped around a run). */
export async function adminQuery(pgUrl: string, query: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(query);
  } finally {
    await client.end();
  }
}

async function freshPostgres(pgUrl: string): Promise<BenchDatabase> {
  const schema = `barge_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await adminQuery(pgUrl, `create schema ${schema}`);
  const dropSchema = () => adminQuery(pgUrl, `drop schema if exists ${schema} cascade`);
  const forget = dropOnInterrupt(dropSchema);
  const database = openDatabase(pgUrl, { schema });
  await migrate(database);
  const url = new URL(pgUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    database,
    async drop() {
      await database.close();
      await dropSchema();
      forget();
    },
  };
}

/** Creates the run's project, `bench`; returns its id. */
export async function benchProject(database: Database, now: number, slug = 'bench'): Promise<string> {
  const project = await createProject(database, slug, now);
  if (project === 'slug_taken') throw new Error('fresh database already has a bench project');
  return project.id;
}

/** What a seeded cargo carries: its stored request (JSON), metadata (JSON) and callback URL. */
export interface CargoContent {
  request: string;
  metadata: string;
  callbackUrl: string | null;
}

/** Where routing sent a cargo: the model as submitted, the provider and its model id. */
export interface CargoRoute {
  model: string;
  provider: string;
  provider_model: string;
}

export const MOCK_ROUTE: CargoRoute = { model: 'svc-mock', provider: 'mock', provider_model: 'svc-mock' };

/** The row POST /cargo/load writes for one request (svc-mock unless routed elsewhere), `pending`, default result TTL. */
export function pendingRow(projectId: string, now: number, content: CargoContent, route = MOCK_ROUTE): NewCargo {
  return {
    id: newId('crg', now),
    project_id: projectId,
    status: 'pending',
    ...route,
    request: content.request,
    request_count: 1,
    is_records: 0,
    request_bytes: Buffer.byteLength(content.request),
    metadata: content.metadata,
    result_ttl_seconds: 30 * 86_400,
    callback_url: content.callbackUrl,
    callback: null,
    created_at: now,
    updated_at: now,
  };
}
