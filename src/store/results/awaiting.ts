/** What the collector reads of a batch's cargo: those still awaiting a result, and a cargo's stored request. */
import { movableFrom } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import { requestedChannels } from '../deliveries/create.js';
import { pagesById } from '../pages.js';
import type { DeliveryChannelName } from '../schema.js';

export interface AwaitingCargo {
  id: string;
  projectId: string;
  /** The model id it was submitted as: what its cost is worked out from. */
  model: string;
  isRecords: boolean;
  requestCount: number;
  resultTtlSeconds: number;
  /** The deliveries the cargo asked for. */
  channels: DeliveryChannelName[];
}

/** Cargo read at once: each read is short (the main connection's reads hold the event loop). */
const PAGE = 500;

/** The cargo of a batch that have no result yet (a re-run of a collection skips the rest). */
export async function cargoAwaitingResults(database: Database, batchId: string): Promise<AwaitingCargo[]> {
  const awaiting: AwaitingCargo[] = [];
  const rows = pagesById(PAGE, (after, size) =>
    database.read
      .selectFrom('cargo')
      .select([
        'id',
        'project_id',
        'model',
        'is_records',
        'request_count',
        'result_ttl_seconds',
        'callback_url',
        'callback',
      ])
      .where('batch_id', '=', batchId)
      .where('id', '>', after)
      .where('status', 'in', movableFrom('result'))
      .orderBy('id')
      .limit(size)
      .execute(),
  );
  for await (const r of rows) {
    awaiting.push({
      id: r.id,
      projectId: r.project_id,
      model: r.model,
      isRecords: r.is_records === 1,
      requestCount: r.request_count,
      resultTtlSeconds: r.result_ttl_seconds,
      channels: requestedChannels(r.callback_url, r.callback),
    });
  }
  return awaiting;
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
