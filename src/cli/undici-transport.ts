/**
 * The client's transport over undici's `request`: a bulk submit sends thousands of requests a
 * second, and the global `fetch` (WHATWG streams, Request and Response objects) costs several
 * times the CPU of the request itself, so the CLI would need more CPU than the service. The
 * timeout is undici's own (for the headers, then between body chunks): an AbortSignal and a
 * timer for each request cost the CLI about a sixth of its CPU.
 */
import { STATUS_CODES } from 'node:http';
import { type Dispatcher, request } from 'undici';
import type { Transport } from '../client/barge.js';

export function undiciTransport(dispatcher: Dispatcher): Transport {
  return async ({ method, url, headers, body, timeoutMs, signal }) => {
    const response = await request(url, {
      method,
      headers,
      body,
      signal,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      statusText: STATUS_CODES[response.statusCode] ?? '',
      retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      text: await response.body.text(),
    };
  };
}
