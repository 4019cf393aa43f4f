import { movableFrom } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import { requestedChannels } from '../deliveries/create.js';
import type { DeliveryChannelName } from '../schema.js';

export interface AwaitingCargo {
  id: string;
  isRecords: boolean;
  requestCount: number;
  resultTtlSeconds: number;
  /** The deliveries the cargo asked for. */
  channels: DeliveryChannelName[];
}

/** The cargo of a batch that have no result yet (a re-run of a collection skips the rest). */
export async function cargoAwaitingResults(database: Database, batchId: string): Promise<AwaitingCargo[]> {
  const rows = await database.read
    .selectFrom('cargo')
    .select(['id', 'is_records', 'request_count', 'result_ttl_seconds', 'callback_url', 'callback'])
    .where('batch_id', '=', batchId)
    .where('status', 'in', movableFrom('result'))
    .execute();
  return rows.map((r) => ({
    id: r.id,
    isRecords: r.is_records === 1,
    requestCount: r.request_count,
    resultTtlSeconds: r.result_ttl_seconds,
    channels: requestedChannels(r.callback_url, r.callback),
  }));
}

/** A cargo's request as stored (JSON text). */
export async function cargoRequest(database: Database, cargoId: string): Promise<string> {
  const row = await database.read
    .selectFrom('cargo_requests')
    .select('request')
    .where('cargo_id', '=', cargoId)
    .executeTakeFirstOrThrow();
  return row.request;
}
