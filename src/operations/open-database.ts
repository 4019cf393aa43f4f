/**
 * The database an admin command works on (the `barge` CLI): the one BARGE_DATABASE_URL names, as
 * the server's, migrated first so a command works on a fresh file. A SQLite file is written on
 * the command's own connection: a write thread costs more to start than its few statements take.
 */
import type { Config } from '../config.js';
import { type Database, openDatabase } from '../store/database.js';
import { migrate } from '../store/migrate.js';

export type { Database };

export async function openAdminDatabase(config: Pick<Config, 'databaseUrl'>): Promise<Database> {
  const database = openDatabase(config.databaseUrl, { writeThread: false });
  try {
    await migrate(database);
    return database;
  } catch (err) {
    await database.close();
    throw err;
  }
}
