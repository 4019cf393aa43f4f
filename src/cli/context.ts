/** How CLI commands run: with the configuration only, or against the migrated database; failures set the exit code. */
import { type Config, loadConfig } from '../config.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { type Database, openAdminDatabase } from '../operations/open-database.js';
import { type Output, printError } from './output.js';

/** What a command's body gets: the operations' dependencies, and where to print. */
export interface CommandDeps {
  database: Database;
  clock: Clock;
  config: Config;
  out: Output;
}

export interface CommandContext {
  run: (opts: { json?: boolean }, body: (ctx: CommandDeps) => Promise<void>) => Promise<void>;
}

/** What a command that needs no database gets (`barge provider check`). */
export type ConfigCommandDeps = Omit<CommandDeps, 'database'>;

export interface ConfigCommandContext {
  run: (opts: { json?: boolean }, body: (ctx: ConfigCommandDeps) => Promise<void>) => Promise<void>;
}

/**
 * Runs one command that needs the configuration only: no database is opened (nor created, nor
 * migrated), so it works where the database is not reachable. Failures set a non-zero exit code.
 */
export const runWithConfig: ConfigCommandContext['run'] = async (opts, body) => {
  const out: Output = { json: opts.json === true };
  try {
    await body({ clock: systemClock, config: loadConfig(), out });
  } catch (err) {
    printError(out, err);
    process.exitCode = 1;
  }
};

/**
 * Runs one admin command against the configured database (the same BARGE_DATABASE_URL as the
 * server), migrating first so the CLI works on a fresh file. The configuration is read here, once,
 * and handed to the command. Failures set a non-zero exit code.
 */
export const runCommand: CommandContext['run'] = (opts, body) =>
  runWithConfig(opts, async ({ config, ...deps }) => {
    const database = await openAdminDatabase(config);
    try {
      await body({ ...deps, database, config });
    } finally {
      await database.close();
    }
  });
