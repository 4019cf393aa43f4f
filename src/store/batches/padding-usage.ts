/** Recording what a batch's padding requests used: the operator's cost, kept apart from every project. */
import type { Tokens } from '../../domain/usage.js';
import type { Database } from '../database.js';
import { type BatchLease, leasedBatchUpdate } from '../leases.js';

/**
 * Sets the batch's padding tokens to the totals of a whole collection, under the batch's lease
 * (a collector that lost it writes nothing; the one that took over writes the same totals). Set,
 * not added: a collection run again after a crash reads every result of the job again, and must
 * not count the padding twice.
 */
export async function recordPaddingUsage(database: Database, lease: BatchLease, tokens: Tokens): Promise<void> {
  await leasedBatchUpdate(database, lease)
    .set({ padding_input_tokens: tokens.inputTokens, padding_output_tokens: tokens.outputTokens })
    .execute();
}
