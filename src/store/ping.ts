/** Whether the database answers: the readiness probe's one query. */
import { sql } from 'kysely';
import type { Database } from './database.js';

/** Resolves when the database answers a query; rejects with the driver's error otherwise. */
export async function ping(database: Database): Promise<void> {
  await sql`select 1`.execute(database.read);
}
