/**
 * Reading AWS SDK errors. The SDK throws; the object-store code turns every failure into a value
 * right at the call, with the error's code, HTTP status and message, and never its request (which
 * carries credentials).
 */
export interface AwsFailure {
  code: string;
  statusCode: number | null;
  message: string;
  /** Response headers, when the service answered. */
  headers: Record<string, string>;
}

export function awsFailure(err: unknown): AwsFailure {
  const e = err as {
    name?: string;
    Code?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    $response?: { statusCode?: number; headers?: Record<string, string> };
    cause?: { code?: string };
  };
  const statusCode = e.$metadata?.httpStatusCode ?? e.$response?.statusCode ?? null;
  // A service answer names its error code; a transport failure has an errno-style code instead.
  const answered = e.$response !== undefined && statusCode !== null;
  const code = answered ? (e.Code ?? e.name) : (e.code ?? e.cause?.code ?? e.name);
  return {
    code: String(code ?? 'Error'),
    statusCode,
    message: oneLine(e.message ?? String(err)),
    headers: e.$response?.headers ?? {},
  };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}

/** Storage, a message service or STS telling us to slow down: backed off and retried within the attempt. */
export function isThrottle(failure: AwsFailure): boolean {
  return (
    failure.code === 'SlowDown' ||
    failure.code === 'Throttling' ||
    failure.code === 'ThrottlingException' ||
    failure.code === 'RequestLimitExceeded' ||
    failure.code === 'TooManyRequestsException' ||
    failure.code === 'Throttled' ||
    failure.code === 'RequestThrottled' ||
    failure.code === 'KmsThrottled' ||
    failure.code === 'KMSThrottling' ||
    failure.statusCode === 503
  );
}

export function isTimeout(failure: AwsFailure): boolean {
  return (
    failure.code === 'AbortError' ||
    failure.code === 'TimeoutError' ||
    failure.code === 'RequestTimeout' ||
    failure.code === 'ETIMEDOUT'
  );
}

export function isNetworkError(failure: AwsFailure): boolean {
  return failure.statusCode === null && /^(E[A-Z]+|UND_ERR_\w+)$/.test(failure.code);
}

export function describe(failure: AwsFailure): string {
  const status = failure.statusCode === null ? '' : ` (HTTP ${failure.statusCode})`;
  return `${failure.code}${status}: ${failure.message}`;
}
