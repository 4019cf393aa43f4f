/**
 * OpenAI SDK failures → ProviderError, the one place that decides how the pipeline sees them:
 * the kind from the HTTP status (errorKindOfStatus), the wait from `retry-after(-ms)`, and a
 * message `<type or code>: <provider message>` with the API key scrubbed out of it.
 */
import { APIError } from 'openai';
import { errorKindOfStatus, ProviderError, retryAfterMsOf, withoutKey } from '../provider.js';

export interface ErrorContext {
  now: number;
  apiKey: string;
  /** The batch was created moments ago: a 404 means "not visible yet", not "gone" (provider.ts justCreated). */
  jobJustCreated?: boolean;
}

export function providerErrorOf(err: unknown, context: ErrorContext): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof APIError && err.status !== undefined) {
    const body = err.error as { message?: unknown } | undefined;
    const message = typeof body?.message === 'string' ? body.message : err.message;
    const label = err.type || err.code || `http_${err.status}`;
    return new ProviderError(
      errorKindOfStatus(err.status, context.jobJustCreated),
      withoutKey(`${label}: ${message}`, context.apiKey),
      retryAfterMsOf(err.headers, context.now),
    );
  }
  // No HTTP answer: a refused or dropped connection, a timeout, a download cut off mid-body.
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError('retryable', withoutKey(`connection_error: ${message}`, context.apiKey));
}
