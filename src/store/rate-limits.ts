import { type Kysely, sql } from 'kysely';
import type { Schema } from './schema.js';

/**
 * Counts one hit in a fixed window shared by every process on the database and returns the
 * window's count. One upsert, one round trip.
 */
export async function countRateLimitHit(db: Kysely<Schema>, key: string, windowStart: number): Promise<number> {
  const row = await db
    .insertInto('rate_limit_windows')
    .values({ key, window_start: windowStart, hits: 1 })
    .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet({ hits: sql`rate_limit_windows.hits + 1` }))
    .returning('hits')
    .executeTakeFirstOrThrow();
  return Number(row.hits);
}

export async function deleteRateLimitWindowsBefore(db: Kysely<Schema>, before: number): Promise<void> {
  await db.deleteFrom('rate_limit_windows').where('window_start', '<', before).execute();
}
