/**
 * The client's transport over undici's `request`: a bulk submit sends thousands of requests a
 * second, and the global `fetch` (WHATWG streams, Request and Response objects) costs several
 * times the CPU of the request itself, so the CLI would need more CPU than the service.
 */
import { STATUS_CODES } from 'node:http';
import { type Dispatcher, request } from 'undici';
import type { Transport } from '../client/barge.js';

export function undiciTransport(dispatcher: Dispatcher): Transport {
  return async ({ method, url, headers, body, signal }) => {
    const response = await request(url, { method, headers, body, signal, dispatcher });
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      statusText: STATUS_CODES[response.statusCode] ?? '',
      retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      text: await response.body.text(),
    };
  };
}
