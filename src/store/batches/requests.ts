import {
  type BatchRequest,
  paddingRequests,
  requestsOfCargo,
  type StoredCargoRequest,
} from '../../domain/batch-requests.js';
import { customIdFor, paddingId } from '../../domain/custom-ids.js';
import type { Database } from '../database.js';

/** Cargo read at once: enough per round trip, and a bounded slice of a large batch in memory. */
const PAGE = 500;

/**
 * The requests of a batch's cargo, in cargo order, a page at a time: a 100,000-request batch is
 * never held whole (the submitter streams them to the provider, svc-mock replays them).
 */
async function* batchCargoRequests(database: Database, batchId: string): AsyncIterable<StoredCargoRequest> {
  let after = '';
  for (;;) {
    const page = await database.read
      .selectFrom('cargo as c')
      .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
      .select(['c.id', 'q.request', 'c.is_records'])
      .where('c.batch_id', '=', batchId)
      .where('c.id', '>', after)
      .orderBy('c.id')
      .limit(PAGE)
      .execute();
    yield* page;
    if (page.length < PAGE) return;
    after = (page[page.length - 1] as StoredCargoRequest).id;
  }
}

/**
 * A batch's provider requests in cargo order, then padding up to `total` requests (a provider's
 * minimum): what the submitter streams to the provider, and what svc-mock replays.
 */
export async function* batchRequests(database: Database, batchId: string, total: number): AsyncIterable<BatchRequest> {
  let count = 0;
  for await (const cargo of batchCargoRequests(database, batchId)) {
    for (const request of requestsOfCargo(cargo)) {
      count++;
      yield request;
    }
  }
  yield* paddingRequests(count, total);
}

/**
 * The custom ids of batchRequests(database, batchId, total), in the same order, read from the cargo
 * rows alone (id, records flag, request count): a provider that maps its own record ids back by
 * position (Bedrock) needs them without reading the requests' text again.
 */
export async function* batchCustomIds(database: Database, batchId: string, total: number): AsyncIterable<string> {
  let count = 0;
  let after = '';
  for (;;) {
    const page = await database.read
      .selectFrom('cargo')
      .select(['id', 'is_records', 'request_count'])
      .where('batch_id', '=', batchId)
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
    for (const cargo of page) {
      for (let i = 0; i < cargo.request_count; i++) {
        count++;
        yield customIdFor(cargo.id, cargo.is_records === 1 ? i : null);
      }
    }
    if (page.length < PAGE) break;
    after = (page[page.length - 1] as { id: string }).id;
  }
  for (let i = count; i < total; i++) yield paddingId(i);
}
