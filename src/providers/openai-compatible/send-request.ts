/**
 * One request to an endpoint, and what its answer means for it: an answer (translated into the
 * message shape as for `openai`), a refusal (a 4xx other than 408 and 429: it fails with the
 * endpoint's message), or a try to repeat (429, 408, 5xx, a timeout, a refused or dropped
 * connection), with the wait the endpoint asked for (`Retry-After`).
 */
import type { EndpointConfig } from '../../config.js';
import { type ChatCompletion, modelMessageOf } from '../openai/translate-response.js';
import { retryAfterMsOf, withoutKey } from '../provider.js';
import { realtimeChatBody } from './chat-request.js';

export type SendOutcome =
  | { kind: 'answered'; response: string }
  | { kind: 'refused'; error: string }
  | { kind: 'retry'; error: string; retryAfterMs: number | null };

export interface Endpoint extends EndpointConfig {
  name: string;
}

/** `Authorization: Bearer <key>` when the endpoint has one. */
export function endpointHeaders(endpoint: Endpoint): Record<string, string> {
  return endpoint.apiKey === null ? {} : { authorization: `Bearer ${endpoint.apiKey}` };
}

/** A text for logs and results without the endpoint's key, which an error may quote. */
export function scrubKey(endpoint: Endpoint, text: string): string {
  return endpoint.apiKey === null ? text : withoutKey(text, endpoint.apiKey);
}

/** Why a fetch got no answer: its deadline passed, or the connection's error (its code when it has one). */
export function fetchFailure(err: unknown): { timedOut: boolean; why: string } {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return {
    timedOut: err instanceof Error && err.name === 'TimeoutError',
    why: cause?.code ?? cause?.message ?? (err as Error).message,
  };
}

export async function sendChatCompletion(
  endpoint: Endpoint,
  request: { model: string; input: string },
  now: () => number,
): Promise<SendOutcome> {
  let body: string;
  try {
    body = JSON.stringify(realtimeChatBody(request.model, request.input));
  } catch (err) {
    return { kind: 'refused', error: `invalid_request: ${(err as Error).message}` };
  }
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${endpoint.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...endpointHeaders(endpoint) },
      body,
      signal: AbortSignal.timeout(endpoint.timeoutMs),
    });
    text = await response.text();
  } catch (err) {
    const { timedOut, why } = fetchFailure(err);
    const error = timedOut ? `timeout: no answer within ${endpoint.timeoutMs} ms` : `connection_error: ${why}`;
    return { kind: 'retry', error: scrubKey(endpoint, error), retryAfterMs: null };
  }
  const status = response.status;
  if (status >= 200 && status < 300) {
    let completion: ChatCompletion;
    try {
      completion = JSON.parse(text) as ChatCompletion;
    } catch {
      return {
        kind: 'refused',
        error: `invalid_response: the endpoint answered ${status} with a body that is not JSON`,
      };
    }
    return { kind: 'answered', response: JSON.stringify(modelMessageOf(completion)) };
  }
  const error = scrubKey(endpoint, errorText(status, text));
  // Not errorKindOfStatus: decisions.md pins that every other 4xx (409 and 401 among them) fails.
  if (status === 429 || status === 408 || status >= 500) {
    return { kind: 'retry', error, retryAfterMs: retryAfterMsOf(response.headers, now()) };
  }
  return { kind: 'refused', error };
}

/**
 * `<type or code>: <message>` from the error body, in any of the shapes self-hosted servers use:
 * OpenAI's `{error: {message, type}}`, vLLM's `{object: "error", message, type}`, Ollama's
 * `{error: "text"}`; else the first bytes of the body.
 */
export function errorText(status: number, text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const object = (v: unknown): Record<string, unknown> | null =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  const body = object(parsed);
  const inner = object(body?.error) ?? body;
  const message =
    (typeof inner?.message === 'string' && inner.message) ||
    (typeof body?.error === 'string' && body.error) ||
    (typeof body?.detail === 'string' && body.detail) ||
    text.slice(0, 500) ||
    'no message given';
  const label =
    (typeof inner?.type === 'string' && inner.type) ||
    (typeof inner?.code === 'string' && inner.code) ||
    `http_${status}`;
  return `${label}: ${message}`;
}
