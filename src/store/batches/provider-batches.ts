/** A provider's unended batches by where they stand: what its limits on jobs are checked against. */
import { sql } from 'kysely';
import type { Database } from '../database.js';

export interface ProviderBatchCounts {
  /** Batches with a job running at the provider. */
  processing: number;
  /** Batches formed and not yet accepted by the provider. */
  submitting: number;
  /** Of those, the ones whose last try failed (refused, rate limited, no answer): they wait to try again. */
  retrying: number;
}

/**
 * How many of a provider's batches have a job running there, and how many wait to be accepted:
 * what a provider's limit on jobs in progress (Bedrock's account quota) is checked against before
 * another job is created, and before another batch is formed ahead of it. Read from the
 * batches_due index (unended batches only).
 */
export async function countProviderBatches(database: Database, provider: string): Promise<ProviderBatchCounts> {
  const row = await database.read
    .selectFrom('batches')
    .select([
      sql<number | string>`sum(case when status = 'processing' then 1 else 0 end)`.as('processing'),
      sql<number | string>`sum(case when status = 'submitting' then 1 else 0 end)`.as('submitting'),
      sql<number | string>`sum(case when status = 'submitting' and attempts > 0 then 1 else 0 end)`.as('retrying'),
    ])
    .where('provider', '=', provider)
    .where('status', 'in', ['processing', 'submitting'])
    // Spelled out so SQLite may use the partial batches_due index (unended batches only).
    .where('status', '<>', 'ended')
    .executeTakeFirst();
  return {
    processing: Number(row?.processing ?? 0),
    submitting: Number(row?.submitting ?? 0),
    retrying: Number(row?.retrying ?? 0),
  };
}
