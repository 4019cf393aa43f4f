/**
 * Wake-ups across processes on PostgreSQL (NOTIFY): new cargo for the batchers, stored results for
 * the deliverers. A SQLite file needs none: a worker process sees another's commits itself
 * (Database.listen).
 */
import { type CompiledQuery, sql } from 'kysely';
import type { Database } from './database.js';

/** New pending cargo committed: workers in other processes wake their batcher. */
export const NEW_CARGO_CHANNEL = 'barge_new_cargo';

/**
 * The NOTIFY for new cargo, as a statement of the transaction that inserts them (PostgreSQL sends
 * it at the commit that makes the rows visible); none on SQLite.
 */
export function newCargoNotice(database: Database): CompiledQuery[] {
  return database.dialect === 'postgres'
    ? [sql`select pg_notify(${NEW_CARGO_CHANNEL}, '')`.compile(database.write)]
    : [];
}

/** Results were stored (deliveries are due): delivery workers in other processes wake. */
export const RESULTS_STORED_CHANNEL = 'barge_results_stored';

export async function notifyResultsStored(database: Database): Promise<void> {
  if (database.dialect === 'postgres') {
    await sql`select pg_notify(${RESULTS_STORED_CHANNEL}, '')`.execute(database.write);
  }
}
