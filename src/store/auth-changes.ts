/**
 * The `auth` change counter: every change to an API key or to a project's standing bumps it in the
 * same transaction, so an API process that cached keys sees, from one cheap read, that it must
 * look them up again (src/http/auth.ts).
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from './database.js';
import type { Schema } from './schema.js';

export async function bumpAuthChanges(tx: Transaction<Schema>): Promise<void> {
  await tx.updateTable('change_counters').set({ value: sql<number>`value + 1` }).where('name', '=', 'auth').execute();
}

export async function readAuthChanges(database: Database): Promise<number> {
  const row = await database.read
    .selectFrom('change_counters')
    .select('value')
    .where('name', '=', 'auth')
    .executeTakeFirst();
  return Number(row?.value ?? 0);
}
