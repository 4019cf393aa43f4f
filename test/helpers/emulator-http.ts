/**
 * Plumbing shared by the provider emulators (anthropic-emulator.ts, openai-emulator.ts): a
 * node:http server on a free loopback port with a small route table, body reading under a byte
 * limit (JSON or multipart), a log of every request received, injected failures (next N calls
 * answer 429/5xx, a create held open until released, 404 for a new batch's first reads), JSONL
 * streaming with backpressure, seeded shuffling and provider-style ids.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as it arrived, kept so tests can assert what a client sent. */
export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, a multipart form, or undefined for a request without a body. */
  body: unknown;
  /** The status the emulator answered (undefined while the answer is held or being streamed). */
  status?: number;
  at: number;
}

export interface MultipartForm {
  fields: Record<string, string>;
  files: Record<string, { filename: string; contentType: string; content: Buffer }>;
}

/** An answer that is not a success: a handler throws it, the server writes it as the provider would. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

/** A JSON answer, a streamed one (lines written with backpressure), or a stored file's bytes. */
export type Reply =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  | { status?: number; lines: Iterable<string>; contentType: string; headers?: Record<string, string> }
  | { status?: number; bytes: Buffer; contentType: string; headers?: Record<string, string> };

export interface RouteContext {
  method: string;
  path: string;
  params: string[];
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface Route {
  method: string;
  /** Matched against the path; capture groups become `params`. */
  path: RegExp;
  body?: 'json' | 'multipart' | 'none';
  /** The id of the batch this call reads, for `notFoundAfterCreate`. */
  readsBatch?: (params: string[]) => string;
  handle: (ctx: RouteContext) => Reply | Promise<Reply>;
}

/** Which calls a fault applies to; every field that is set must match. */
export interface CallMatcher {
  method?: string;
  path?: RegExp;
}

export interface FailureSpec extends CallMatcher {
  status: number;
  /** `retry-after` in seconds (fractions work with both SDKs); null sends none (a spend-cap 429). */
  retryAfterSeconds?: number | null;
}

export interface HeldCall {
  /** Resolves when a matching call has arrived and is being held. */
  arrived: Promise<void>;
  /** Lets the held call go on (apply it, if not applied yet, and answer). */
  release(): void;
}

/** How each emulator speaks: its error body, its auth check, its limits, its response headers. */
export interface ProviderDialect {
  errorBody(status: number, message: string): unknown;
  /** Throws an HttpError when the call is not authorized (or lacks a required header). */
  checkHeaders(headers: IncomingHttpHeaders, route: Route): void;
  maxBodyBytes: number;
  tooLarge(limit: number): HttpError;
  responseHeaders(): Record<string, string>;
}

interface PendingHold extends CallMatcher {
  apply: 'on-arrival' | 'on-release';
  arrived: () => void;
  released: Promise<void>;
}

/** Failure injection and call holding; each emulator exposes this as `faults`. */
export class Faults {
  private failures: Array<FailureSpec & { remaining: number }> = [];
  private holds: PendingHold[] = [];
  private hiddenReadsPerNewBatch = 0;
  private hiddenReads = new Map<string, number>();

  /** The next `count` matching calls answer `status` (with `retry-after` when given). */
  failNext(count: number, spec: FailureSpec): void {
    this.failures.push({ retryAfterSeconds: 1, ...spec, remaining: count });
  }

  /**
   * Holds the next matching call open until `release()`. `on-arrival` (default) applies it at once
   * (the provider accepted it: a created batch is already listed) and only withholds the answer;
   * `on-release` applies it when released.
   */
  holdNext(matcher: CallMatcher, apply: 'on-arrival' | 'on-release' = 'on-arrival'): HeldCall {
    let arrived!: () => void;
    let release!: () => void;
    const arrivedPromise = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.holds.push({ ...matcher, apply, arrived, released });
    return { arrived: arrivedPromise, release };
  }

  /** Batches created from now on answer 404 to their first `count` reads (retrieve, results). */
  notFoundAfterCreate(count: number): void {
    this.hiddenReadsPerNewBatch = count;
  }

  /** @internal Called by the server when a batch is created. */
  batchCreated(id: string): void {
    if (this.hiddenReadsPerNewBatch > 0) this.hiddenReads.set(id, this.hiddenReadsPerNewBatch);
  }

  /** @internal True when this read of a new batch must answer 404. */
  hideRead(id: string): boolean {
    const left = this.hiddenReads.get(id) ?? 0;
    if (left <= 0) return false;
    this.hiddenReads.set(id, left - 1);
    return true;
  }

  /** @internal The injected failure for this call, if any (consumes one). */
  takeFailure(method: string, path: string): FailureSpec | undefined {
    const failure = this.failures.find((f) => f.remaining > 0 && matches(f, method, path));
    if (failure) failure.remaining--;
    return failure;
  }

  /** @internal The hold for this call, if any (consumes it). */
  takeHold(method: string, path: string): PendingHold | undefined {
    const index = this.holds.findIndex((h) => matches(h, method, path));
    return index < 0 ? undefined : this.holds.splice(index, 1)[0];
  }
}

function matches(matcher: CallMatcher, method: string, path: string): boolean {
  return (matcher.method === undefined || matcher.method === method) && (!matcher.path || matcher.path.test(path));
}

export interface EmulatorServer {
  url: string;
  log: LoggedRequest[];
  faults: Faults;
  close(): Promise<void>;
}

/** Starts the HTTP server for one emulator on 127.0.0.1 and a free port. */
export async function startEmulatorServer(dialect: ProviderDialect, routes: Route[]): Promise<EmulatorServer> {
  const log: LoggedRequest[] = [];
  const faults = new Faults();

  const server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      // A bug in an emulator: answer 500 in the provider's shape so the test fails visibly.
      if (!res.headersSent) send(res, 500, dialect.errorBody(500, `emulator bug: ${String(err)}`), {});
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = req.method ?? 'GET';
    const entry: LoggedRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: undefined,
      at: Date.now(),
    };
    log.push(entry);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.status = status;
      send(res, status, body, { ...dialect.responseHeaders(), ...headers });
    };

    let route: Route | undefined;
    let params: string[] = [];
    for (const candidate of routes) {
      const match = candidate.method === method ? candidate.path.exec(url.pathname) : null;
      if (match) {
        route = candidate;
        params = match.slice(1).map(decodeURIComponent);
        break;
      }
    }
    try {
      const raw = await readBody(req, dialect.maxBodyBytes);
      if (raw === 'too large') throw dialect.tooLarge(dialect.maxBodyBytes);
      entry.body = parseBody(raw, route ? (route.body ?? 'json') : 'none', req.headers['content-type'], dialect);
      if (!route) throw new HttpError(404, dialect.errorBody(404, `Not Found: ${method} ${url.pathname}`));
      dialect.checkHeaders(req.headers, route);
      const failure = faults.takeFailure(method, url.pathname);
      if (failure) {
        const retryAfter: Record<string, string> =
          failure.retryAfterSeconds == null ? {} : { 'retry-after': String(failure.retryAfterSeconds) };
        throw new HttpError(failure.status, dialect.errorBody(failure.status, 'injected failure'), retryAfter);
      }
      const batchId = route.readsBatch?.(params);
      if (batchId !== undefined && faults.hideRead(batchId)) {
        throw new HttpError(404, dialect.errorBody(404, `batch ${batchId} not found`));
      }
      const ctx: RouteContext = {
        method,
        path: url.pathname,
        params,
        query: entry.query,
        headers: req.headers,
        body: entry.body,
      };
      const hold = faults.takeHold(method, url.pathname);
      if (hold?.apply === 'on-release') {
        hold.arrived();
        await hold.released;
      }
      // A refused call is held too: a test waiting for `arrived` must not hang.
      let reply: Reply | HttpError;
      try {
        reply = await route.handle(ctx);
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        reply = err;
      }
      if (hold?.apply === 'on-arrival') {
        hold.arrived();
        await hold.released;
      }
      if (reply instanceof HttpError) throw reply;
      if (res.destroyed) return; // the client went away while the call was held
      if ('json' in reply) {
        answer(reply.status ?? 200, reply.json, reply.headers);
      } else {
        entry.status = reply.status ?? 200;
        res.writeHead(entry.status, {
          ...dialect.responseHeaders(),
          'content-type': reply.contentType,
          ...reply.headers,
        });
        if ('bytes' in reply) res.end(reply.bytes);
        else await streamLines(res, reply.lines);
      }
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      answer(err.status, err.body, err.headers);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    faults,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Reads the whole body; past `limit` bytes it drains the rest (so the client reads the answer). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size > limit ? 'too large' : Buffer.concat(chunks);
}

function parseBody(
  raw: Buffer,
  kind: 'json' | 'multipart' | 'none',
  contentType: string | undefined,
  dialect: ProviderDialect,
): unknown {
  if (raw.length === 0) return undefined;
  if (kind === 'none') return raw.toString('utf8');
  if (kind === 'multipart') {
    const form = parseMultipart(raw, contentType ?? '');
    if (form) return form;
    throw new HttpError(400, dialect.errorBody(400, 'Expected a multipart/form-data body'));
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, dialect.errorBody(400, 'There was an error parsing the body as JSON'));
  }
}

/** A small multipart/form-data parser (what undici's FormData sends): fields and files. */
export function parseMultipart(raw: Buffer, contentType: string): MultipartForm | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!contentType.startsWith('multipart/form-data') || !boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const form: MultipartForm = { fields: {}, files: {} };
  let start = raw.indexOf(delimiter);
  while (start >= 0) {
    const partStart = start + delimiter.length;
    if (raw.subarray(partStart, partStart + 2).toString() === '--') break; // closing delimiter
    const next = raw.indexOf(delimiter, partStart);
    if (next < 0) return undefined;
    const part = raw.subarray(partStart + 2, next - 2); // skip the CRLF after the delimiter and before the next
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) return undefined;
    const head = part.subarray(0, headerEnd).toString('utf8');
    const content = part.subarray(headerEnd + 4);
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    const filename = /filename="([^"]*)"/i.exec(head)?.[1];
    if (name !== undefined && filename !== undefined) {
      const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? 'application/octet-stream';
      form.files[name] = { filename, contentType: type, content };
    } else if (name !== undefined) {
      form.fields[name] = content.toString('utf8');
    }
    start = next;
  }
  return form;
}

/** Writes lines in chunks of about 64 KB, waiting for the socket to drain (results can be large). */
async function streamLines(res: ServerResponse, lines: Iterable<string>): Promise<void> {
  let chunk = '';
  for (const line of lines) {
    chunk += `${line}\n`;
    if (chunk.length >= 65536) {
      if (!res.write(chunk)) await drainedOrClosed(res);
      if (res.destroyed) return;
      chunk = '';
    }
  }
  res.end(chunk);
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Splits a JSONL text into its lines, without the empty one after a final newline. */
export function jsonlLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** A seeded random source (mulberry32), so shuffled orders repeat from run to run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A shuffled copy (Fisher–Yates): providers never promise result order. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

const ALPHABETS = {
  base62: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  hex: '0123456789abcdef',
};

/**
 * A random id in a provider's style, e.g. `msgbatch_01` + 22 base-62 characters. Math.random, not
 * crypto: ids only need to differ, and crypto per id was the emulators' main cost at 100,000 results.
 */
export function randomId(prefix: string, length: number, alphabet: keyof typeof ALPHABETS = 'base62'): string {
  const chars = ALPHABETS[alphabet];
  let id = prefix;
  for (let i = 0; i < length; i++) id += chars[Math.floor(Math.random() * chars.length)];
  return id;
}

/** Rough token counts, deterministic so tests can compute usage and cost from what they sent. */
export function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));
}

/** An unknown field on every object, so tests can check nothing drops fields it does not know. */
export const EXTRA_FIELD = { future_field: { added_by: 'emulator' } } as const;

/** The reply text every emulated model writes, and its token count when not cut by max tokens. */
export const REPLY_WORDS = 'This is an emulated reply from the provider emulator used in tests.'.split(' ');
