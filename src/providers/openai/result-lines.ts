/**
 * One line of an OpenAI batch output or error file → a request's result. The shapes (spec
 * providers.md §3.4, field-notes.md §3.2): a request that ran is `{custom_id, response:
 * {status_code, body}, error: null}`, a success when the status is 2xx, a failure with the error
 * under `response.body.error` otherwise; a request that never ran is `{custom_id, response: null,
 * error: {code, message}}` (`batch_expired`, `batch_cancelled`). Both files carry both shapes in
 * practice, so each line is read on its own, whichever file it came from.
 */
import type { RequestResult } from '../provider.js';
import { type ChatCompletion, modelMessageOf } from './translate-response.js';

interface ErrorObject {
  type?: string | null;
  code?: string | null;
  message?: string | null;
}

interface OutputLine {
  custom_id?: unknown;
  response?: { status_code?: number; body?: unknown } | null;
  error?: ErrorObject | null;
}

/** The result a line carries; null for a line that names no request (it is skipped). */
export function resultOfLine(text: string): RequestResult | null {
  let line: OutputLine;
  try {
    line = JSON.parse(text) as OutputLine;
  } catch {
    return null;
  }
  if (line === null || typeof line !== 'object' || typeof line.custom_id !== 'string') return null;
  const customId = line.custom_id;
  const response = line.response;
  if (response && typeof response === 'object') {
    const status = response.status_code ?? 0;
    const body = response.body;
    if (status >= 200 && status < 300 && body !== null && typeof body === 'object') {
      return { customId, success: true, response: modelMessageOf(body as ChatCompletion) };
    }
    const error = (body as { error?: ErrorObject } | null | undefined)?.error ?? line.error ?? null;
    return { customId, success: false, kind: 'errored', error: errorText(error, `http_${status}`) };
  }
  const error = line.error ?? null;
  if (error?.code === 'batch_expired') {
    return { customId, success: false, kind: 'expired', error: `expired: ${error.message ?? 'batch_expired'}` };
  }
  if (error?.code === 'batch_cancelled') {
    return { customId, success: false, kind: 'canceled', error: `canceled: ${error.message ?? 'batch_cancelled'}` };
  }
  return { customId, success: false, kind: 'errored', error: errorText(error, 'error') };
}

/** `<type or code>: <message>`, the provider's own words (decisions.md). */
function errorText(error: ErrorObject | null, fallback: string): string {
  const label = error?.type || error?.code || fallback;
  return `${label}: ${error?.message || 'no message given'}`;
}
