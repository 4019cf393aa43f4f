/**
 * OpenAI SDK failures → ProviderError, the one place that decides how the pipeline sees them:
 * the kind from the HTTP status (errorKindOfStatus), the wait from `retry-after(-ms)`, and a
 * message `<type or code>: <provider message>` with the API key scrubbed out of it.
 */
import { APIError } from 'openai';
import { errorKindOfStatus, ProviderError, retryAfterMsOf } from '../provider.js';

export interface ErrorContext {
  now: number;
  apiKey: string;
  /** A 404 from reading a batch created moments ago means "not visible yet", not "gone". */
  notFoundIsTransient?: boolean;
}

export function providerErrorOf(err: unknown, context: ErrorContext): ProviderError {
  if (err instanceof ProviderError) return err;
  const scrub = (text: string) => (context.apiKey ? text.split(context.apiKey).join('[redacted]') : text);
  if (err instanceof APIError && err.status !== undefined) {
    const body = err.error as { message?: unknown } | undefined;
    const message = typeof body?.message === 'string' ? body.message : err.message;
    const label = err.type || err.code || `http_${err.status}`;
    const kind = err.status === 404 && context.notFoundIsTransient ? 'retryable' : errorKindOfStatus(err.status);
    return new ProviderError(kind, scrub(`${label}: ${message}`), retryAfterMsOf(err.headers, context.now));
  }
  // No HTTP answer: a refused or dropped connection, a timeout, a download cut off mid-body.
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError('retryable', scrub(`connection_error: ${message}`));
}

/** Runs one provider call, turning whatever it throws into a ProviderError. */
export async function calling<T>(context: () => ErrorContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw providerErrorOf(err, context());
  }
}
