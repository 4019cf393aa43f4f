/** Counting a provider's batches with a job running there, against its limit on jobs in progress. */
import type { Database } from '../database.js';

/**
 * How many of a provider's batches have a job running there (`processing`): what a provider's
 * limit on jobs in progress (Bedrock's account quota) is checked against before another is created.
 */
export async function countJobsInProgress(database: Database, provider: string): Promise<number> {
  const row = await database.read
    .selectFrom('batches')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('provider', '=', provider)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
