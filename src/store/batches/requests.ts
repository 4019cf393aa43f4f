import type { Database } from '../database.js';

export interface BatchCargo {
  id: string;
  request: string;
  is_records: number;
}

/** The provider requests of a batch, in cargo order. */
export async function batchCargoRequests(database: Database, batchId: string): Promise<BatchCargo[]> {
  return database.read
    .selectFrom('cargo')
    .select(['id', 'request', 'is_records'])
    .where('batch_id', '=', batchId)
    .orderBy('id')
    .execute();
}
