import { type Kysely, sql, type Transaction } from 'kysely';
import type { Schema } from './schema.js';

/**
 * The `auth` change counter: every change to an API key or to a project's standing bumps it in the
 * same transaction, so an API process that cached keys sees, from one cheap read, that it must
 * look them up again (src/http/auth.ts).
 */
export async function bumpAuthChanges(tx: Transaction<Schema> | Kysely<Schema>): Promise<void> {
  await tx.updateTable('change_counters').set({ value: sql<number>`value + 1` }).where('name', '=', 'auth').execute();
}

export async function readAuthChanges(db: Kysely<Schema>): Promise<number> {
  const row = await db.selectFrom('change_counters').select('value').where('name', '=', 'auth').executeTakeFirst();
  return Number(row?.value ?? 0);
}
