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

/** Deliveries are due (results were stored, a redelivery scheduled): delivery workers in other processes wake. */
export const RESULTS_STORED_CHANNEL = 'barge_results_stored';

/** The NOTIFY for due deliveries, as a statement of the transaction that makes them due. */
export function resultsStoredNotice(database: Database): CompiledQuery[] {
  return database.dialect === 'postgres'
    ? [sql`select pg_notify(${RESULTS_STORED_CHANNEL}, '')`.compile(database.write)]
    : [];
}

export async function notifyResultsStored(database: Database): Promise<void> {
  for (const notice of resultsStoredNotice(database)) await database.write.executeQuery(notice);
}
