/**
 * The client's transport over undici's `dispatch`: a bulk submit sends thousands of requests a
 * second, and the CLI shares the machine with the service it loads. The global `fetch` (WHATWG
 * streams, Request and Response objects) costs several times the CPU of the request itself, and
 * undici's `request` still makes a Readable stream and an abort listener for each answer; a
 * dispatch handler takes the status, the Retry-After header and the body's chunks as they come.
 * The timeout is undici's own (for the headers, then between body chunks): an AbortSignal and a
 * timer for each request cost the CLI about a sixth of its CPU.
 */
import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Transport } from '../client/barge.js';

type Answer = Awaited<ReturnType<Transport>>;

export function undiciTransport(dispatcher: Dispatcher): Transport {
  return ({ method, url, headers, body, timeoutMs, signal }) =>
    new Promise<Answer>((resolve, reject) => {
      signal?.throwIfAborted();
      const { origin, pathname, search } = new URL(url);
      const handler = new AnswerHandler(resolve, reject, signal);
      dispatcher.dispatch(
        {
          origin,
          path: `${pathname}${search}`,
          method,
          headers,
          body: body ?? null,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        handler,
      );
    });
}

/** Collects one answer (undici's callback handler): its status, Retry-After and body text. */
class AnswerHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private statusText = '';
  private retryAfter: string | null = null;
  private readonly chunks: Buffer[] = [];
  private settled = false;
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (err: unknown) => void,
    private readonly signal: AbortSignal | undefined,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    const { signal } = this;
    if (!signal) return;
    if (signal.aborted) {
      abort(signal.reason);
      return;
    }
    const onAbort = () => abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.stopListening = () => signal.removeEventListener('abort', onAbort);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], _resume: () => void, statusText?: string): boolean {
    this.status = statusCode;
    this.statusText = statusText || STATUS_CODES[statusCode] || '';
    for (let i = 0; i < rawHeaders.length; i += 2) {
      if (rawHeaders[i]?.toString('latin1').toLowerCase() === 'retry-after') {
        this.retryAfter = rawHeaders[i + 1]?.toString('latin1') ?? null;
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.settle();
    this.resolve({
      status: this.status,
      statusText: this.statusText,
      retryAfter: this.retryAfter,
      text: Buffer.concat(this.chunks).toString('utf8'),
    });
  }

  onError(err: Error): void {
    this.settle();
    this.reject(err);
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.stopListening?.();
  }
}
