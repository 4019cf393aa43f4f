import type { Kysely } from 'kysely';
import { loadConfig } from '../config.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { type Database, openDatabase } from '../store/database.js';
import { migrate } from '../store/migrate.js';
import type { Schema } from '../store/schema.js';
import { type Output, printError } from './output.js';

export interface CommandContext {
  run: (
    opts: { json?: boolean },
    body: (ctx: { db: Kysely<Schema>; database: Database; clock: Clock; out: Output }) => Promise<void>,
  ) => Promise<void>;
}

/**
 * Runs one admin command against the configured database (the same BARGE_DATABASE_URL as the
 * server), migrating first so the CLI works on a fresh file. Failures set a non-zero exit code.
 */
export const runCommand: CommandContext['run'] = async (opts, body) => {
  const out: Output = { json: opts.json === true };
  try {
    const database = openDatabase(loadConfig().databaseUrl, { writeThread: false });
    try {
      await migrate(database);
      await body({ db: database.write, database, clock: systemClock, out });
    } finally {
      await database.close();
    }
  } catch (err) {
    printError(out, err);
    process.exitCode = 1;
  }
};
