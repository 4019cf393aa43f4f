/**
 * The typed client of barge's HTTP API, shaped like the official provider SDKs: one class, a
 * method per operation, one error class, retries with backoff that keep one Idempotency-Key.
 * It uses nothing but `fetch`, so it runs on Node and in a browser that can reach the service.
 */
import { BargeError, type FieldError } from './errors.js';
import type {
  CargoPage,
  CargoResult,
  ListFilters,
  Loaded,
  LoadRequest,
  Models,
  Tracking,
  Usage,
  UsageQuery,
} from './types.js';

export interface BargeOptions {
  /** Default: BARGE_BASE_URL, else http://localhost:8080. */
  baseUrl?: string;
  /** Default: BARGE_API_KEY. */
  apiKey?: string;
  /** Retries of a request answered 429 or 5xx, or not answered at all. Default 2. */
  maxRetries?: number;
  /** How long one try may take. Default 60 s. */
  timeoutMs?: number;
  /**
   * How one request goes out. Default: the global `fetch`. A program that sends thousands of
   * requests a second (the CLI's bulk submit) passes a leaner one.
   */
  transport?: Transport;
}

/**
 * One HTTP exchange as the client needs it: the status, the Retry-After header and the body text.
 * It gives up after `timeoutMs` (rejecting), and when the caller's `signal` aborts.
 */
export type Transport = (request: {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
}) => Promise<{ status: number; statusText: string; retryAfter: string | null; text: string }>;

/** The transport over a `fetch`. */
export function fetchTransport(fetchFn: typeof fetch = globalThis.fetch.bind(globalThis)): Transport {
  return async ({ method, url, headers, body, timeoutMs, signal }) => {
    // A timer cleared with the answer, not AbortSignal.timeout: that one lives on for the whole
    // timeout, and a bulk submit makes thousands of requests a second.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException('timed out', 'TimeoutError')), timeoutMs);
    try {
      const response = await fetchFn(url, {
        method,
        headers,
        body,
        signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
      });
      return {
        status: response.status,
        statusText: response.statusText,
        retryAfter: response.headers.get('retry-after'),
        text: await response.text(),
      };
    } finally {
      clearTimeout(timer);
    }
  };
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** The first pause between polls; later ones grow to at most 30 s. Default 1 s. */
  pollIntervalMs?: number;
  /** Give up (rejecting with a TimeoutError) after this long. Default: never. */
  timeoutMs?: number;
}

const DEFAULT_BASE_URL = 'http://localhost:8080';
const MAX_POLL_INTERVAL_MS = 30_000;
/** Backoff between tries: 0.5 s, 1 s, 2 s ... at most 8 s, unless Retry-After says otherwise. */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 8_000;
/** A Retry-After beyond this is not waited for: the error goes to the caller. */
const RETRY_AFTER_MAX_MS = 60_000;

interface Call {
  method: 'GET' | 'POST';
  path: string;
  /** The request body as JSON text. */
  json?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export class Barge {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly transport: Transport;

  constructor(options: BargeOptions = {}) {
    const env = environment();
    this.baseUrl = (options.baseUrl ?? env.BARGE_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.apiKey = options.apiKey ?? env.BARGE_API_KEY;
    this.maxRetries = options.maxRetries ?? 2;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.transport = options.transport ?? fetchTransport();
  }

  /**
   * Submits a cargo. Every try sends the same Idempotency-Key (the given one, else a fresh one),
   * so a retry after a lost answer returns the first cargo instead of making a second.
   */
  load(body: LoadRequest, options: { idempotencyKey?: string } = {}): Promise<Loaded> {
    return this.loadText(JSON.stringify(body), options);
  }

  /**
   * `load` of a body that is JSON text already (a line of a JSONL file), sent as it is: its
   * metadata comes back exactly as written, where a parse and stringify would round numbers past
   * 2^53 and move integer-like keys first. Text that is not a JSON object is the service's to refuse.
   */
  loadText(json: string, options: { idempotencyKey?: string } = {}): Promise<Loaded> {
    const key = options.idempotencyKey ?? globalThis.crypto.randomUUID();
    return this.call({ method: 'POST', path: '/cargo/load', json, headers: { 'idempotency-key': key } });
  }

  tracking(cargoId: string): Promise<Tracking> {
    return this.call({ method: 'GET', path: `/cargo/${encodeURIComponent(cargoId)}/tracking` });
  }

  /** The stored result; a BargeError with code `result_not_ready` (409) before there is one. */
  result(cargoId: string, options: { signal?: AbortSignal } = {}): Promise<CargoResult> {
    return this.call({ method: 'GET', path: resultPath(cargoId), signal: options.signal });
  }

  /** Polls the result, with growing pauses (or the server's Retry-After), until there is one. */
  async waitForResult(cargoId: string, options: WaitOptions = {}): Promise<CargoResult> {
    return parseJson(await this.waitForResultText(cargoId, options)) as CargoResult;
  }

  /**
   * `waitForResult`, answering the result as the JSON text the service sent: its metadata exactly
   * as it was submitted, where a parse would round numbers past 2^53 and move integer-like keys first.
   */
  async waitForResultText(cargoId: string, options: WaitOptions = {}): Promise<string> {
    const signals = [
      options.signal,
      options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs),
    ];
    const signal = AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
    let pause = options.pollIntervalMs ?? 1000;
    for (;;) {
      signal.throwIfAborted();
      try {
        return await this.callText({ method: 'GET', path: resultPath(cargoId), signal });
      } catch (err) {
        if (!(err instanceof BargeError) || err.code !== 'result_not_ready') throw err;
        await sleep(err.retryAfterMs ?? pause, signal);
        pause = Math.min(pause * 1.5, Math.max(MAX_POLL_INTERVAL_MS, pause));
      }
    }
  }

  /** Cancels a `pending` or `batched` cargo; a BargeError with code `cannot_cancel` (409) otherwise. */
  cancel(cargoId: string): Promise<Tracking> {
    return this.call({ method: 'POST', path: `/cargo/${encodeURIComponent(cargoId)}/cancel` });
  }

  /** The project's cargo, newest first, over every page (`limit` is the page size). */
  async *list(filters: ListFilters = {}): AsyncGenerator<Tracking, void, undefined> {
    let after: string | undefined;
    for (;;) {
      const page = await this.listPage({ ...filters, after });
      yield* page.data;
      if (!page.has_more || page.last_id === null) return;
      after = page.last_id;
    }
  }

  /** One page of GET /cargo; `after` is the previous page's `last_id`. */
  listPage(filters: ListFilters & { after?: string } = {}): Promise<CargoPage> {
    return this.call({ method: 'GET', path: `/cargo${queryString(filters)}` });
  }

  models(): Promise<Models> {
    return this.call({ method: 'GET', path: '/models' });
  }

  usage(query: UsageQuery = {}): Promise<Usage> {
    return this.call({ method: 'GET', path: `/usage${queryString(query)}` });
  }

  /** One request with its retries, its answer parsed. */
  private async call<T>(call: Call): Promise<T> {
    return parseJson(await this.callText(call)) as T;
  }

  /** One request with its retries, its answer's text: 429, 5xx and no answer are tried again, up to maxRetries times. */
  private async callText(call: Call): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      let error: BargeError;
      try {
        return await this.send(call);
      } catch (err) {
        if (!(err instanceof BargeError)) throw err;
        error = err;
      }
      const retryable = error.status === 0 || error.status === 429 || error.status >= 500;
      if (!retryable || attempt >= this.maxRetries || call.signal?.aborted) throw error;
      const wait =
        error.retryAfterMs ?? Math.min(RETRY_BASE_MS * 2 ** attempt, RETRY_MAX_MS) * (0.75 + Math.random() / 2);
      if (wait > RETRY_AFTER_MAX_MS) throw error;
      await sleep(wait, call.signal);
    }
  }

  /** One try: the answer's text when it is a 2xx, else a BargeError. */
  private async send(call: Call): Promise<string> {
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
    if (this.apiKey !== undefined) headers['x-api-key'] = this.apiKey;
    if (call.json !== undefined) headers['content-type'] = 'application/json';
    let response: Awaited<ReturnType<Transport>>;
    try {
      response = await this.transport({
        method: call.method,
        url: `${this.baseUrl}${call.path}`,
        headers,
        body: call.json,
        timeoutMs: this.timeoutMs,
        ...(call.signal ? { signal: call.signal } : {}),
      });
    } catch (err) {
      // The caller's own abort is not a failure of the service: it goes up as it is.
      if (call.signal?.aborted) throw call.signal.reason;
      throw new BargeError(0, `${this.baseUrl} did not answer: ${causeText(err)}`, { cause: err });
    }
    const { text } = response;
    if (response.status >= 200 && response.status < 300) return text;
    const { detail, errors } = (parseJson(text) ?? {}) as { detail?: unknown; errors?: FieldError[] };
    throw new BargeError(response.status, detail ?? (text || response.statusText), {
      errors: errors ?? [],
      retryAfterMs: retryAfterMs(response.retryAfter),
    });
  }
}

/** Retry-After in milliseconds: seconds, or an HTTP date; null when absent or unreadable. */
function retryAfterMs(value: string | null): number | null {
  if (value === null || value === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

const resultPath = (cargoId: string) => `/cargo/${encodeURIComponent(cargoId)}/result`;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function causeText(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** BARGE_* settings where there is a process environment (Node), none in a browser. */
function environment(): Record<string, string | undefined> {
  return typeof process === 'undefined' ? {} : process.env;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
