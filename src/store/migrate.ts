import { type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Database } from './database.js';
import * as initial from './migrations/001_initial.js';

/** Numbered, never edited once landed; a new change is a new file here. */
const MIGRATIONS: Record<string, Migration> = {
  '001_initial': initial,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export interface MigrationReport {
  applied: string[];
}

export async function migrate(database: Database): Promise<MigrationReport> {
  const migrator = new Migrator({ db: database.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
  };
}
