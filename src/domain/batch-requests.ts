import { customIdFor, paddingId } from './custom-ids.js';

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

/** The provider requests of one stored cargo, in record order. */
export function* requestsOfCargo(cargo: StoredCargoRequest): Generator<BatchRequest> {
  const { requests } = JSON.parse(cargo.request) as { requests: { modelInput: unknown }[] };
  const records = cargo.is_records === 1;
  for (let i = 0; i < requests.length; i++) {
    yield {
      customId: customIdFor(cargo.id, records ? i : null),
      // The stored text came from JSON.stringify, so this is exactly the stored model input.
      input: JSON.stringify((requests[i] as { modelInput: unknown }).modelInput),
    };
  }
}

/** The cheapest valid request, sent only to reach a provider's minimum batch size. */
const PADDING_INPUT = JSON.stringify({ max_tokens: 1, messages: [{ role: 'user', content: '.' }] });

/** Filler requests `from`..`to - 1`, whose results are discarded. */
export function* paddingRequests(from: number, to: number): Generator<BatchRequest> {
  for (let i = from; i < to; i++) yield { customId: paddingId(i), input: PADDING_INPUT };
}
