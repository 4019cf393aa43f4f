/**
 * The client's transport over undici's `dispatch`: a bulk submit sends thousands of requests a
 * second, and the CLI shares the machine with the service it loads. The global `fetch` (WHATWG
 * streams, Request and Response objects) costs several times the CPU of the request itself, and
 * undici's `request` still makes a Readable stream and an abort listener for each answer; a
 * dispatch handler takes the status, the Retry-After header and the body's chunks as they come.
 * The timeout is undici's own (for the headers, then between body chunks): an AbortSignal and a
 * timer for each request cost the CLI about a sixth of its CPU.
 *
 * A keyed request (a `load` with its Idempotency-Key) may ride an HTTP/1.1 pipeline: sending it
 * again is safe, so when a connection drops with answers owed, undici sends the unanswered ones
 * again on another and the key gives back each first cargo.
 */
import { type IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import type { Transport } from '../client/barge.js';

/** Keyed requests in flight on one connection of a `pipelinedAgent`. */
export const PIPELINING = 8;

/**
 * The agent for `inFlight` keyed requests at once (bulk submit): PIPELINING to a connection. Against
 * one connection a request in flight, the CLI and the service each spend about a sixth less CPU a
 * request (fewer sockets, reads and writes; `bench/RESULTS.md`), and the two share the machine.
 */
export function pipelinedAgent(inFlight: number): Agent {
  return new Agent({ pipelining: PIPELINING, connections: Math.ceil(inFlight / PIPELINING) });
}

type Answer = Awaited<ReturnType<Transport>>;

export function undiciTransport(dispatcher: Dispatcher): Transport {
  // A bulk submit sends one URL thousands of times: it is parsed once.
  let last = { url: '', origin: '', path: '' };
  const parts = (url: string) => {
    if (url !== last.url) {
      const { origin, pathname, search } = new URL(url);
      last = { url, origin, path: `${pathname}${search}` };
    }
    return last;
  };
  return ({ method, url, headers, body, timeoutMs, signal }) =>
    new Promise<Answer>((resolve, reject) => {
      signal?.throwIfAborted();
      const { origin, path } = parts(url);
      const keyed = headers['idempotency-key'] !== undefined;
      const handler = new AnswerHandler(resolve, reject, signal);
      dispatcher.dispatch(
        {
          origin,
          path,
          method,
          headers,
          body: body ?? null,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          // A keyed request may be sent again, and its answer comes at once: others may follow it
          // on its connection. Any other POST waits for the connection to itself.
          idempotent: method === 'GET' || keyed,
          blocking: !keyed,
        },
        handler,
      );
    });
}

/** Collects one answer (an undici dispatch handler): its status, Retry-After and body text. */
class AnswerHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private statusText = '';
  private retryAfter: string | null = null;
  private readonly chunks: Buffer[] = [];
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (err: unknown) => void,
    private readonly signal: AbortSignal | undefined,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    const { signal } = this;
    if (!signal) return;
    if (signal.aborted) {
      controller.abort(signal.reason);
      return;
    }
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.stopListening = () => signal.removeEventListener('abort', onAbort);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.status = statusCode;
    this.statusText = statusMessage || STATUS_CODES[statusCode] || '';
    const retryAfter = headers['retry-after'];
    this.retryAfter = typeof retryAfter === 'string' ? retryAfter : null;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.stopListening?.();
    this.resolve({
      status: this.status,
      statusText: this.statusText,
      retryAfter: this.retryAfter,
      text: Buffer.concat(this.chunks).toString('utf8'),
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.stopListening?.();
    this.reject(err);
  }
}
