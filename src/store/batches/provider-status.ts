/** What the batches say of each provider: how many are in flight, and the newest error one holds. */
import { sql } from 'kysely';
import type { Database } from '../database.js';

export interface ProviderBatches {
  inFlight: number;
  lastError: { message: string; at: number; batchId: string } | null;
}

/**
 * Per provider name: batches not ended (along `batches_due`) and the newest error a batch holds
 * (along `batches_errors`, migration 021: one row read per provider). The conditions are spelled
 * as the partial indexes' own, which SQLite needs to see to use them.
 */
export async function providerBatches(
  database: Database,
  providers: readonly string[],
): Promise<Map<string, ProviderBatches>> {
  const counts = await database.read
    .selectFrom('batches')
    .select(['provider', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where(sql<boolean>`status <> 'ended'`)
    .groupBy('provider')
    .execute();
  const inFlight = new Map(counts.map((row) => [row.provider, Number(row.n)]));
  const status = new Map<string, ProviderBatches>();
  for (const provider of providers) {
    const error = await database.read
      .selectFrom('batches')
      .select(['id', 'last_error', 'updated_at'])
      .where('provider', '=', provider)
      .where(sql<boolean>`last_error is not null`)
      .orderBy('updated_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    status.set(provider, {
      inFlight: inFlight.get(provider) ?? 0,
      lastError:
        error?.last_error == null
          ? null
          : { message: error.last_error, at: Number(error.updated_at), batchId: error.id },
    });
  }
  return status;
}
