/**
 * A local emulator of Anthropic's Message Batches API (base URL without `/v1`, as the SDK expects),
 * for tests of barge's Anthropic adapter. Wire formats follow ../shared/spec/providers.md §1 and the
 * official SDK (`@anthropic-ai/sdk`); test/providers/anthropic-emulator.test.ts checks it with that SDK.
 *
 * It checks what the real API checks: the key (`x-api-key`, or `Authorization: Bearer`; x-api-key
 * wins), a known `anthropic-version` header, the create body (`requests`, 1..100,000 items of
 * exactly `custom_id` + `params`), `custom_id` (1–64 of [a-zA-Z0-9_-], unique in the batch) and the
 * 256 MB body limit (413), all as synchronous 400/413 answers. Like the real API it validates each
 * request's `params` only when the batch ends: a bad one (no model, max_tokens < 1, no messages,
 * `stream: true`, or temperature/top_p/top_k under version 2026-10-21) becomes an `errored` result.
 *
 * Batches walk `in_progress` (→ `canceling`) → `ended`; counts stay in `processing` until the end;
 * `results_url` (absolute, pointing here) appears only then; results come back shuffled.
 * Test controls: `endAll()`/`end(id)`, `stepEveryRetrieves`, a clock past `expires_at`, per
 * custom_id outcomes (`setOutcome`, or the `outcome` option), and `faults` (429/5xx, held calls,
 * 404 after create). When a batch ends canceled or expired, requests with an explicit outcome count
 * as already processed and keep it; the others become `canceled` / `expired`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  EXTRA_FIELD,
  estimateTokens,
  HttpError,
  type ProviderDialect,
  REPLY_WORDS,
  type Route,
  randomId,
  seededRandom,
  shuffled,
  startEmulatorServer,
} from './emulator-http.js';

export const ANTHROPIC_VERSIONS = ['2023-01-01', '2023-06-01', '2026-10-21'] as const;

export interface BatchRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

export type AnthropicOutcome =
  | { type: 'succeeded'; message?: Record<string, unknown> }
  | { type: 'errored'; error: { type: string; message: string } }
  | { type: 'expired' }
  | { type: 'canceled' };

export interface AnthropicEmulatorOptions {
  apiKey?: string;
  /** Real limits by default; tests lower them to check the refusals cheaply. */
  maxRequests?: number;
  maxBodyBytes?: number;
  /** Milliseconds since the epoch; a batch retrieved past its `expires_at` ends with its requests expired. */
  clock?: () => number;
  /** A batch ends by itself on every Nth retrieve (0: only `end`/`endAll` end it). */
  stepEveryRetrieves?: number;
  /** Decides a request's outcome when no `setOutcome` applies (undefined: the default). */
  outcome?: (request: BatchRequest) => AnthropicOutcome | undefined;
  /** Seed of the result shuffle. */
  seed?: number;
}

type Status = 'in_progress' | 'canceling' | 'ended';

interface Batch {
  id: string;
  requests: BatchRequest[];
  version: string;
  status: Status;
  createdAt: number;
  expiresAt: number;
  endedAt: number | null;
  cancelInitiatedAt: number | null;
  retrieves: number;
  results: Array<{ custom_id: string; result: Record<string, unknown> }> | null;
  deleted: boolean;
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const DAY_MS = 24 * 60 * 60 * 1000;
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function startAnthropicEmulator(options: AnthropicEmulatorOptions = {}) {
  const apiKey = options.apiKey ?? 'sk-ant-test-key';
  const maxRequests = options.maxRequests ?? 100_000;
  const clock = options.clock ?? Date.now;
  const random = seededRandom(options.seed ?? 1);
  const batches = new Map<string, Batch>();
  const outcomes = new Map<string, AnthropicOutcome>();

  const error = (status: number, message: string) => new HttpError(status, errorBody(status, message));
  const dialect: ProviderDialect = {
    errorBody,
    maxBodyBytes: options.maxBodyBytes ?? 256 * 1024 * 1024,
    tooLarge: () => error(413, 'Request exceeds the maximum size'),
    responseHeaders: () => ({ 'request-id': randomId('req_011C', 20) }),
    checkHeaders(headers: IncomingHttpHeaders) {
      const key = headers['x-api-key'] ?? /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
      if (!key) throw error(401, 'x-api-key header is required');
      if (key !== apiKey) throw error(401, 'invalid x-api-key');
      const version = headers['anthropic-version'];
      if (!version) throw error(400, 'anthropic-version: header is required');
      if (!(ANTHROPIC_VERSIONS as readonly string[]).includes(String(version))) {
        throw error(400, `anthropic-version: invalid version "${version}"`);
      }
    },
  };

  function find(id: string): Batch {
    const batch = batches.get(id);
    if (!batch || batch.deleted) throw error(404, `message_batch ${id} not found`);
    return batch;
  }

  function view(batch: Batch) {
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (batch.results) for (const { result } of batch.results) counts[result.type as keyof typeof counts]++;
    else counts.processing = batch.requests.length;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.status,
      request_counts: counts,
      ended_at: iso(batch.endedAt),
      created_at: iso(batch.createdAt),
      expires_at: iso(batch.expiresAt),
      archived_at: null,
      cancel_initiated_at: iso(batch.cancelInitiatedAt),
      results_url: batch.status === 'ended' ? `${server.url}/v1/messages/batches/${batch.id}/results` : null,
      ...EXTRA_FIELD,
    };
  }

  function end(batch: Batch, reason: 'processed' | 'expired'): void {
    if (batch.status === 'ended') return;
    const stopped = batch.status === 'canceling' ? 'canceled' : reason === 'expired' ? 'expired' : undefined;
    batch.results = batch.requests.map((request) => {
      const chosen = outcomes.get(request.custom_id) ?? options.outcome?.(request);
      const outcome: AnthropicOutcome = chosen ?? (stopped ? { type: stopped } : { type: 'succeeded' });
      return { custom_id: request.custom_id, result: resultFor(request, outcome, batch.version) };
    });
    batch.status = 'ended';
    batch.endedAt = clock();
  }

  function create(body: unknown, version: string): Batch {
    if (typeof body !== 'object' || body === null) throw error(400, 'requests: Field required');
    for (const key of Object.keys(body)) {
      if (key !== 'requests') throw error(400, `${key}: Extra inputs are not permitted`);
    }
    const requests = (body as { requests?: unknown }).requests;
    if (!Array.isArray(requests)) throw error(400, 'requests: Input should be a valid list');
    if (requests.length === 0) throw error(400, 'requests: List should have at least 1 item after validation, not 0');
    if (requests.length > maxRequests) {
      throw error(
        400,
        `requests: List should have at most ${maxRequests} items after validation, not ${requests.length}`,
      );
    }
    const seen = new Set<string>();
    requests.forEach((request: unknown, i) => {
      if (typeof request !== 'object' || request === null)
        throw error(400, `requests.${i}: Input should be a valid dictionary`);
      for (const key of Object.keys(request)) {
        if (key !== 'custom_id' && key !== 'params')
          throw error(400, `requests.${i}.${key}: Extra inputs are not permitted`);
      }
      const { custom_id: customId, params } = request as Partial<BatchRequest>;
      if (typeof customId !== 'string') throw error(400, `requests.${i}.custom_id: Field required`);
      if (customId.length > 64) throw error(400, `requests.${i}.custom_id: String should have at most 64 characters`);
      if (!CUSTOM_ID.test(customId)) {
        throw error(400, `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      }
      if (seen.has(customId))
        throw error(400, `requests.${i}.custom_id: Duplicate custom_id "${customId}" in the batch`);
      seen.add(customId);
      if (typeof params !== 'object' || params === null || Array.isArray(params)) {
        throw error(400, `requests.${i}.params: Input should be a valid dictionary`);
      }
    });
    const now = clock();
    const batch: Batch = {
      id: randomId('msgbatch_01', 22),
      requests: requests as BatchRequest[],
      version,
      status: 'in_progress',
      createdAt: now,
      expiresAt: now + DAY_MS,
      endedAt: null,
      cancelInitiatedAt: null,
      retrieves: 0,
      results: null,
      deleted: false,
    };
    batches.set(batch.id, batch);
    server.faults.batchCreated(batch.id);
    return batch;
  }

  function list(query: Record<string, string>) {
    const limit = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw error(400, 'limit: Input should be greater than or equal to 1 and less than or equal to 1000');
    }
    const newestFirst = [...batches.values()].filter((b) => !b.deleted).reverse();
    let page: Batch[];
    let hasMore: boolean;
    if (query.before_id !== undefined) {
      const end = newestFirst.findIndex((b) => b.id === query.before_id);
      const newer = end < 0 ? [] : newestFirst.slice(0, end);
      page = newer.slice(-limit);
      hasMore = newer.length > limit;
    } else {
      const start = query.after_id === undefined ? 0 : newestFirst.findIndex((b) => b.id === query.after_id) + 1;
      const older = start <= 0 && query.after_id !== undefined ? [] : newestFirst.slice(start);
      page = older.slice(0, limit);
      hasMore = older.length > limit;
    }
    return { data: page.map(view), has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
  }

  const batchPath = /^\/v1\/messages\/batches\/([^/]+)$/;
  const routes: Route[] = [
    {
      method: 'POST',
      path: /^\/v1\/messages\/batches$/,
      handle: ({ body, headers }) => ({ json: view(create(body, String(headers['anthropic-version']))) }),
    },
    { method: 'GET', path: /^\/v1\/messages\/batches$/, handle: ({ query }) => ({ json: list(query) }) },
    {
      method: 'GET',
      path: batchPath,
      readsBatch: ([id]) => id as string,
      handle: ({ params: [id] }) => {
        const batch = find(id as string);
        batch.retrieves++;
        if (batch.status !== 'ended' && clock() >= batch.expiresAt) end(batch, 'expired');
        const every = options.stepEveryRetrieves ?? 0;
        if (every > 0 && batch.retrieves % every === 0) end(batch, 'processed');
        return { json: view(batch) };
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/messages\/batches\/([^/]+)\/results$/,
      readsBatch: ([id]) => id as string,
      handle: ({ params: [id] }) => {
        const batch = find(id as string);
        if (!batch.results) throw error(404, `results of message_batch ${batch.id} are not available yet`);
        const order = shuffled(batch.results, random);
        // Serialized while streaming, so 100,000 results are never all held as text at once.
        const lines = (function* () {
          for (const line of order) yield JSON.stringify(line);
        })();
        return { lines, contentType: 'application/x-jsonl' };
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/messages\/batches\/([^/]+)\/cancel$/,
      body: 'none',
      handle: ({ params: [id] }) => {
        const batch = find(id as string);
        if (batch.status === 'in_progress') {
          batch.status = 'canceling';
          batch.cancelInitiatedAt = clock();
        }
        return { json: view(batch) };
      },
    },
    {
      method: 'DELETE',
      path: batchPath,
      body: 'none',
      handle: ({ params: [id] }) => {
        const batch = find(id as string);
        if (batch.status !== 'ended') {
          throw error(400, `Batch ${batch.id} cannot be deleted while it is processing; cancel it first`);
        }
        batch.deleted = true;
        return { json: { id: batch.id, type: 'message_batch_deleted' } };
      },
    },
  ];

  const server = await startEmulatorServer(dialect, routes);
  return {
    url: server.url,
    apiKey,
    /** Every request received, in order (method, path, query, headers, parsed body, status). */
    log: server.log,
    faults: server.faults,
    /** Holds the next create call open (see Faults.holdNext). */
    holdNextCreate: (apply?: 'on-arrival' | 'on-release') =>
      server.faults.holdNext({ method: 'POST', path: /^\/v1\/messages\/batches$/ }, apply),
    batch: (id: string) => batches.get(id),
    batches: () => [...batches.values()],
    setOutcome: (customId: string, outcome: AnthropicOutcome) => void outcomes.set(customId, outcome),
    /** Ends one batch now (its requests processed, or canceled when it was canceling). */
    end: (id: string) => end(find(id), 'processed'),
    /** Ends a batch as if its 24 hours ran out: requests without an explicit outcome expire. */
    expire: (id: string) => end(find(id), 'expired'),
    endAll: () => {
      for (const batch of batches.values()) end(batch, 'processed');
    },
    close: server.close,
  };
}

export type AnthropicEmulator = Awaited<ReturnType<typeof startAnthropicEmulator>>;

function errorBody(status: number, message: string) {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message }, request_id: randomId('req_011C', 20) };
}

/** Why the API would refuse these params when it processes the request (null: they are fine). */
function paramsProblem(params: Record<string, unknown>, version: string): string | null {
  if (typeof params.model !== 'string' || params.model === '') return 'model: Field required';
  if (!Number.isInteger(params.max_tokens) || (params.max_tokens as number) < 1) {
    return 'max_tokens: Input should be an integer greater than or equal to 1';
  }
  if (!Array.isArray(params.messages) || params.messages.length === 0) return 'messages: Field required';
  if (params.stream === true) return 'stream: Streaming is not supported in the Message Batches API';
  if (version === '2026-10-21') {
    for (const name of ['temperature', 'top_p', 'top_k']) {
      if (name in params) return `${name}: Extra inputs are not permitted`;
    }
  }
  return null;
}

function resultFor(request: BatchRequest, outcome: AnthropicOutcome, version: string): Record<string, unknown> {
  if (outcome.type !== 'succeeded') {
    if (outcome.type !== 'errored') return { type: outcome.type };
    return { type: 'errored', error: { type: 'error', error: outcome.error, request_id: null } };
  }
  const problem = paramsProblem(request.params, version);
  if (problem) {
    const error = { type: 'invalid_request_error', message: problem };
    return { type: 'errored', error: { type: 'error', error, request_id: null } };
  }
  return { type: 'succeeded', message: { ...messageFor(request.params), ...outcome.message } };
}

/** A realistic Message: the emulator's reply, cut at max_tokens, with token counts. */
export function messageFor(params: Record<string, unknown>) {
  const maxTokens = params.max_tokens as number;
  const words = REPLY_WORDS.slice(0, maxTokens);
  return {
    id: randomId('msg_01', 22),
    type: 'message',
    role: 'assistant',
    model: params.model,
    content: [{ type: 'text', text: words.join(' ') }],
    stop_reason: words.length < REPLY_WORDS.length ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: {
      input_tokens: estimateTokens([params.system, params.messages]),
      output_tokens: words.length,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      server_tool_use: null,
      service_tier: 'batch',
      inference_geo: 'not_available',
    },
    ...EXTRA_FIELD,
  };
}
