/** A batch's requests as a provider gets them: each stored cargo's requests with their custom ids, then padding. */
import type { CargoRecord } from './cargo-request.js';
import { customIdFor, paddingId } from './custom-ids.js';
import type { ModelInput } from './request-surface.js';

/**
 * What goes to a provider for one request: its custom id and its model input as JSON text (the
 * client's params less `model`, as stored). Providers get a batch's requests as a stream of these,
 * read from the store as they are consumed, so a 100,000-request batch is never a list of parsed
 * objects in memory.
 */
export interface BatchRequest {
  /** Unique within the batch, `^[a-zA-Z0-9_-]{1,64}$` (the strictest provider rule). */
  customId: string;
  /** JSON text of the model input. */
  input: string;
}

/** A cargo as stored: its id, its request JSON (`{requests: [{recordId?, modelInput}]}`). */
export interface StoredCargoRequest {
  id: string;
  request: string;
  is_records: number;
}

/**
 * The request text a cargo is stored with, written once when it is loaded: `{"requests": [...]}`,
 * each request its model input (a `records` cargo's also its record id). requestsOfCargo reads it.
 */
export function storedRequestText(requests: CargoRecord[] | { modelInput: ModelInput }[]): string {
  return JSON.stringify({ requests });
}

/**
 * How the stored text of a cargo that is not `records` begins and ends (storedRequestText of one
 * `{modelInput}`), so what lies between is exactly the model input's JSON text.
 */
const SINGLE_PREFIX = '{"requests":[{"modelInput":';
const SINGLE_SUFFIX = '}]}';

/** The provider requests of one stored cargo, in record order. */
export function* requestsOfCargo(cargo: StoredCargoRequest): Generator<BatchRequest> {
  const records = cargo.is_records === 1;
  const text = cargo.request;
  if (!records && text.startsWith(SINGLE_PREFIX) && text.endsWith(SINGLE_SUFFIX)) {
    // The one request, cut out of the text: a batch's requests are read for every submit and
    // every svc-mock replay, and parsing and serialising each again cost more than reading it.
    yield {
      customId: customIdOfRequest(cargo.id, false, 0),
      input: text.slice(SINGLE_PREFIX.length, -SINGLE_SUFFIX.length),
    };
    return;
  }
  const { requests } = JSON.parse(text) as { requests: { modelInput: unknown }[] };
  for (let i = 0; i < requests.length; i++) {
    yield {
      customId: customIdOfRequest(cargo.id, records, i),
      // The stored text came from JSON.stringify, so this is exactly the stored model input.
      input: JSON.stringify((requests[i] as { modelInput: unknown }).modelInput),
    };
  }
}

/** The custom ids requestsOfCargo gives, from the cargo row alone (without its request text). */
export function* customIdsOfCargo(cargo: { id: string; is_records: number; request_count: number }): Generator<string> {
  for (let i = 0; i < cargo.request_count; i++) yield customIdOfRequest(cargo.id, cargo.is_records === 1, i);
}

/** A records cargo's requests carry their index; a single request is the cargo's own id. */
function customIdOfRequest(cargoId: string, records: boolean, index: number): string {
  return customIdFor(cargoId, records ? index : null);
}

/** The cheapest valid request, sent only to reach a provider's minimum batch size. */
const PADDING_INPUT = JSON.stringify({ max_tokens: 1, messages: [{ role: 'user', content: '.' }] });

/** Filler requests `from`..`to - 1`, whose results are discarded. */
export function* paddingRequests(from: number, to: number): Generator<BatchRequest> {
  for (let i = from; i < to; i++) yield { customId: paddingId(i), input: PADDING_INPUT };
}

/** The custom ids of paddingRequests(from, to). */
export function* paddingIds(from: number, to: number): Generator<string> {
  for (let i = from; i < to; i++) yield paddingId(i);
}

/**
 * A batch's items in cargo order, then filler up to `total`: `ofCargo` gives each cargo's, and
 * `filler(from, to)` the rest (padding to a provider's minimum).
 */
export async function* paddedTo<C, T>(
  cargo: AsyncIterable<C>,
  ofCargo: (cargo: C) => Iterable<T>,
  total: number,
  filler: (from: number, to: number) => Iterable<T>,
): AsyncGenerator<T> {
  let count = 0;
  for await (const one of cargo) {
    for (const item of ofCargo(one)) {
      count++;
      yield item;
    }
  }
  yield* filler(count, total);
}
