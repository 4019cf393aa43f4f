/** A batch's provider requests and their custom ids, read from the store a page at a time. */
import {
  type BatchRequest,
  customIdsOfCargo,
  paddedTo,
  paddingIds,
  paddingRequests,
  requestsOfCargo,
  type StoredCargoRequest,
} from '../../domain/batch-requests.js';
import type { Database } from '../database.js';
import { pagesById } from '../pages.js';

/**
 * Cargo read at once, in id order (store/pages.ts): enough per round trip, and a bounded slice of
 * a large batch in memory, so a 100,000-request batch is never held whole.
 */
const PAGE = 500;

/**
 * A batch's provider requests in cargo order, then padding up to `total` requests (a provider's
 * minimum): what the submitter streams to the provider, and what svc-mock replays.
 */
export function batchRequests(database: Database, batchId: string, total: number): AsyncIterable<BatchRequest> {
  const cargo = pagesById<StoredCargoRequest>(PAGE, (after, size) =>
    database.read
      .selectFrom('cargo as c')
      .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
      .select(['c.id', 'q.request', 'c.is_records'])
      .where('c.batch_id', '=', batchId)
      .where('c.id', '>', after)
      .orderBy('c.id')
      .limit(size)
      .execute(),
  );
  return paddedTo(cargo, requestsOfCargo, total, paddingRequests);
}

/**
 * The custom ids of batchRequests(database, batchId, total), in the same order, read from the cargo
 * rows alone (id, records flag, request count): a provider that maps its own record ids back by
 * position (Bedrock) needs them without reading the requests' text again.
 */
export function batchCustomIds(database: Database, batchId: string, total: number): AsyncIterable<string> {
  const cargo = pagesById(PAGE, (after, size) =>
    database.read
      .selectFrom('cargo')
      .select(['id', 'is_records', 'request_count'])
      .where('batch_id', '=', batchId)
      .where('id', '>', after)
      .orderBy('id')
      .limit(size)
      .execute(),
  );
  return paddedTo(cargo, customIdsOfCargo, total, paddingIds);
}
