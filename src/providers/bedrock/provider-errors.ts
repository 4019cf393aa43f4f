/** Turns what the AWS SDK throws (Bedrock control plane, S3 staging) into the ProviderError kinds the pipeline acts on. */
import { errorKindOfStatus, ProviderError, type ProviderErrorKind } from '../provider.js';

/**
 * Bedrock answers a create past the account's quota of jobs in progress with this (400): the
 * batch waits for a slot, it is not refused.
 */
const QUOTA_WAIT_MS = 60_000;

/** Error names whose kind their status alone would not give. */
const KIND_BY_NAME: Record<string, ProviderErrorKind> = {
  ThrottlingException: 'rate_limited',
  ServiceQuotaExceededException: 'rate_limited',
  SlowDown: 'rate_limited',
  AccessDeniedException: 'auth',
  AccessDenied: 'auth',
  UnrecognizedClientException: 'auth',
  InvalidSignatureException: 'auth',
  ExpiredTokenException: 'auth',
  InvalidAccessKeyId: 'auth',
  SignatureDoesNotMatch: 'auth',
  CredentialsProviderError: 'auth',
};

interface AwsError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/**
 * `<error name>: <message>` with the kind its name or status says: throttling and the jobs quota
 * wait, access errors are `auth` (the operator must fix a policy), other 4xx `rejected`, 5xx and
 * no answer `retryable`; a 404 for a job created moments ago is `retryable` (not visible yet).
 * `what` says what barge was doing, so an operator can act on the message.
 */
export function providerErrorOf(err: unknown, what: string, jobJustCreated = false): ProviderError {
  if (err instanceof ProviderError) return err;
  const aws = (err ?? {}) as AwsError;
  const name = typeof aws.name === 'string' ? aws.name : 'Error';
  const status = aws.$metadata?.httpStatusCode;
  const message = `${what}: ${name}: ${aws.message || 'no message given'}`;
  const kind = KIND_BY_NAME[name] ?? errorKindOfStatus(status, jobJustCreated);
  const wait = name === 'ServiceQuotaExceededException' ? QUOTA_WAIT_MS : null;
  return new ProviderError(kind, message, wait);
}
