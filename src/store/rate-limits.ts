/** The shared rate-limit windows in the database: adding the processes' hit counts, deleting ended windows. */
import { sql } from 'kysely';
import type { Database } from './database.js';

/**
 * Adds many processes' local hit counts to their fixed windows, one multi-row upsert for all the
 * keys, and returns each window's total: what every process has counted so far.
 */
export async function addRateLimitHits(
  database: Database,
  hits: { key: string; windowStart: number; hits: number }[],
): Promise<{ key: string; windowStart: number; hits: number }[]> {
  if (hits.length === 0) return [];
  const rows = await database.write
    .insertInto('rate_limit_windows')
    .values(hits.map((h) => ({ key: h.key, window_start: h.windowStart, hits: h.hits })))
    .onConflict((oc) =>
      oc.columns(['key', 'window_start']).doUpdateSet({ hits: sql`rate_limit_windows.hits + excluded.hits` }),
    )
    .returning(['key', 'window_start', 'hits'])
    .execute();
  return rows.map((r) => ({ key: r.key, windowStart: Number(r.window_start), hits: Number(r.hits) }));
}

export async function deleteRateLimitWindowsBefore(database: Database, before: number): Promise<void> {
  await database.write.deleteFrom('rate_limit_windows').where('window_start', '<', before).execute();
}
