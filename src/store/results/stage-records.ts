/** Staging a records cargo's per-record results until every record has one, under the batch's lease. */
import type { Tokens } from '../../domain/usage.js';
import { statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import { assertBatchLease, type BatchLease } from '../leases.js';

export interface StagedRecord extends Tokens {
  cargoId: string;
  recordIndex: number;
  success: boolean;
  /** JSON of `{recordId, success, response, error}`. */
  body: string;
}

/** Keeps records' results until every record of their cargo has one, under the batch's lease. */
export async function stageRecordResults(
  database: Database,
  lease: BatchLease,
  records: StagedRecord[],
): Promise<void> {
  if (records.length === 0) return;
  await database.write.transaction().execute(async (tx) => {
    await assertBatchLease(tx, database.dialect, lease);
    for (const part of statementChunks(records, 9, (r) => r.body.length)) {
      await tx
        .insertInto('record_results')
        .values(
          part.map((r) => ({
            cargo_id: r.cargoId,
            record_index: r.recordIndex,
            success: r.success ? 1 : 0,
            body: r.body,
            input_tokens: r.inputTokens,
            output_tokens: r.outputTokens,
            cache_creation_input_tokens: r.cacheCreationTokens,
            cache_creation_1h_input_tokens: r.cacheCreation1hTokens,
            cache_read_input_tokens: r.cacheReadTokens,
          })),
        )
        .onConflict((oc) => oc.columns(['cargo_id', 'record_index']).doNothing())
        .execute();
    }
  });
}

/** A records cargo's staged results, in record order. */
export async function stagedRecordResults(database: Database, cargoId: string): Promise<StagedRecord[]> {
  const rows = await database.read
    .selectFrom('record_results')
    .selectAll()
    .where('cargo_id', '=', cargoId)
    .orderBy('record_index')
    .execute();
  return rows.map((r) => ({
    cargoId: r.cargo_id,
    recordIndex: r.record_index,
    success: r.success === 1,
    body: r.body,
    inputTokens: r.input_tokens,
    outputTokens: r.output_tokens,
    cacheCreationTokens: r.cache_creation_input_tokens,
    cacheCreation1hTokens: r.cache_creation_1h_input_tokens,
    cacheReadTokens: r.cache_read_input_tokens,
  }));
}
