import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Config, ObjectStoreConfig } from '../../config.js';
import { openSecret } from '../../domain/secret-box.js';
import type { Connection } from '../../store/connections.js';
import { AwsClients, type S3Target, type SigningCredentials } from './aws-clients.js';
import { type AwsFailure, awsFailure, describe, isNetworkError, isThrottle, isTimeout } from './aws-errors.js';
import { BucketRegions } from './bucket-regions.js';
import { RoleSessions, type SessionRequest } from './role-sessions.js';
import { isThrottledResult, withThrottleBackoff } from './throttle-backoff.js';

/**
 * Failure classes of an object write (recorded on the attempt, shown in tracking):
 * - target_not_found: the bucket does not exist (deleted since submit);
 * - assume_role_denied: the role could not be assumed, or the write was denied (permission
 *   removed, a bucket policy deny, a broken trust policy); the connection is marked failed;
 * - target_misconfigured: the bucket encrypts with a customer-managed key the role cannot use
 *   (the detail names the KMS.* error);
 * - throttled: the store kept throttling beyond the service's own backoff;
 * - the rest are transient on either side: assume_role_failed, storage_error, timeout, network,
 *   and connection_unusable for a connection this process cannot use (its sealed secret).
 */
export type WriteFailureClass =
  | 'target_not_found'
  | 'assume_role_denied'
  | 'target_misconfigured'
  | 'throttled'
  | 'assume_role_failed'
  | 'storage_error'
  | 'timeout'
  | 'network'
  | 'connection_unusable';

export type WriteStage = 'access' | 'region' | 'put';

export type WriteOutcome =
  | {
      ok: true;
      region: string;
      etag: string | null;
      versionId: string | null;
      /** `x-amz-server-side-encryption` of the written object (`aws:kms`, `AES256`), if reported. */
      encryption: string | null;
      kmsKeyId: string | null;
    }
  | { ok: false; stage: WriteStage; errorClass: WriteFailureClass; detail: string; statusCode: number | null };

/** Where a connection writes: the bucket and prefix a session is scoped to. */
export interface WriteScope {
  connection: Connection;
  bucket: string;
  keyPrefix: string;
}

export interface WriteRequest extends WriteScope {
  key: string;
  body: string;
  metadata: Record<string, string>;
}

export interface BucketWriterDeps {
  clients: AwsClients;
  sessions: RoleSessions;
  regions: BucketRegions;
  config: ObjectStoreConfig;
  secretKey: Buffer | null;
  /** Wall clock, for deadlines and backoff. */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

type Step<T> = { ok: true; value: T } | { ok: false; failure: AwsFailure };

/**
 * Writes one object into a customer's bucket through a connection: credentials (an assumed-role
 * session, or the connection's static credentials), the bucket's region, then PutObject. Every
 * failure comes back as a classified value; throttling is backed off here and never surfaces
 * unless it outlasts the backoff.
 */
export class BucketWriter {
  constructor(private readonly deps: BucketWriterDeps) {}

  async write(request: WriteRequest): Promise<WriteOutcome> {
    const { config } = this.deps;
    const signal = AbortSignal.timeout(config.attemptTimeoutMs);
    const deadline = this.deps.now() + config.attemptTimeoutMs;
    const { connection } = request;

    const access = await this.credentialsFor(request, signal, deadline);
    if (!access.ok) return access.outcome;
    const base: S3Target = {
      region: connection.region ?? config.region,
      endpoint: connection.endpointUrl ?? config.s3Endpoint,
      // A connection's own endpoint is an S3-compatible store: most of them need path style.
      forcePathStyle: connection.endpointUrl !== null || config.forcePathStyle,
      credentials: access.credentials,
    };

    const located = await this.backoff(async () => {
      const outcome = await this.deps.regions.resolve(base, request.bucket, signal);
      return outcome.kind === 'failed'
        ? { ok: false as const, failure: outcome.failure }
        : { ok: true as const, value: outcome };
    }, deadline);
    if (isThrottledResult(located)) return throttled('region', located.tries, located.detail);
    if (!located.ok) return transient('region', located.failure);
    if (located.value.kind === 'not_found') {
      return fail(
        'region',
        'target_not_found',
        `bucket '${request.bucket}' does not exist (${describe(located.value.failure)})`,
        404,
      );
    }
    const target = { ...base, region: located.value.region };

    const put = await this.backoff(async (): Promise<Step<WriteOutcome & { ok: true }>> => {
      try {
        const client = this.deps.clients.s3(target, { followRegionRedirects: true });
        const output = await client.send(
          new PutObjectCommand({
            Bucket: request.bucket,
            Key: request.key,
            Body: request.body,
            ContentType: 'application/json',
            Metadata: request.metadata,
          }),
          { abortSignal: signal },
        );
        return {
          ok: true,
          value: {
            ok: true,
            region: target.region,
            etag: output.ETag ?? null,
            versionId: output.VersionId ?? null,
            encryption: output.ServerSideEncryption ?? null,
            kmsKeyId: output.SSEKMSKeyId ?? null,
          },
        };
      } catch (err) {
        return { ok: false, failure: awsFailure(err) };
      }
    }, deadline);
    if (isThrottledResult(put)) return throttled('put', put.tries, put.detail);
    if (put.ok) return put.value;
    return this.putFailure(request, target, put.failure);
  }

  /** Only the first step: can the connection's credentials be had (the role assumed)? */
  async probeAccess(scope: WriteScope): Promise<{ ok: true } | { ok: false; detail: string }> {
    const timeoutMs = this.deps.config.attemptTimeoutMs;
    const access = await this.credentialsFor(scope, AbortSignal.timeout(timeoutMs), this.deps.now() + timeoutMs);
    if (access.ok) return { ok: true };
    return { ok: false, detail: access.outcome.ok ? '' : `${access.outcome.errorClass}: ${access.outcome.detail}` };
  }

  /** Closes the pooled sockets and the STS client. */
  close(): void {
    this.deps.clients.destroy();
  }

  private async credentialsFor(
    request: WriteScope,
    signal: AbortSignal,
    deadline: number,
  ): Promise<{ ok: true; credentials: SigningCredentials } | { ok: false; outcome: WriteOutcome }> {
    const { connection } = request;
    if (connection.roleArn === null) {
      const opened = this.openStaticCredentials(connection);
      if (opened === null) {
        return {
          ok: false,
          outcome: fail(
            'access',
            'connection_unusable',
            `the static credentials of ${connection.id} cannot be opened: BARGE_SECRET_KEY is missing or not the key they were stored with`,
            null,
          ),
        };
      }
      return { ok: true, credentials: opened };
    }
    const session = await this.backoff(async () => {
      const outcome = await this.deps.sessions.get(sessionRequest(request), signal);
      return outcome.ok ? { ok: true as const, value: outcome.credentials } : outcome;
    }, deadline);
    if (isThrottledResult(session)) return { ok: false, outcome: throttled('access', session.tries, session.detail) };
    if (session.ok) return { ok: true, credentials: session.value };
    const { failure } = session;
    if (failure.code === 'AccessDenied' || failure.statusCode === 403) {
      return {
        ok: false,
        outcome: fail(
          'access',
          'assume_role_denied',
          `AssumeRole of ${connection.roleArn} was denied: ${describe(failure)}`,
          failure.statusCode,
        ),
      };
    }
    if (isTimeout(failure))
      return { ok: false, outcome: fail('access', 'timeout', `AssumeRole: ${describe(failure)}`, null) };
    return {
      ok: false,
      outcome: fail(
        'access',
        'assume_role_failed',
        `AssumeRole of ${connection.roleArn} failed: ${describe(failure)}`,
        failure.statusCode,
      ),
    };
  }

  private openStaticCredentials(connection: Connection): SigningCredentials | null {
    if (connection.sealedCredentials === null || this.deps.secretKey === null) return null;
    const text = openSecret(this.deps.secretKey, connection.sealedCredentials, connection.id);
    if (text === null) return null;
    const parsed = JSON.parse(text) as { accessKeyId: string; secretAccessKey: string };
    return { accessKeyId: parsed.accessKeyId, secretAccessKey: parsed.secretAccessKey };
  }

  private putFailure(request: WriteRequest, target: S3Target, failure: AwsFailure): WriteOutcome {
    const what = describe(failure);
    if (failure.code === 'NoSuchBucket' || (failure.statusCode === 404 && failure.code !== 'NoSuchKey')) {
      this.deps.regions.forget(target, request.bucket);
      return fail('put', 'target_not_found', `bucket '${request.bucket}' does not exist (${what})`, failure.statusCode);
    }
    if (failure.code.startsWith('KMS.')) {
      return fail(
        'put',
        'target_misconfigured',
        `the bucket's encryption key cannot be used: ${what}`,
        failure.statusCode,
      );
    }
    if (failure.code === 'AccessDenied' && /\bkms:/i.test(failure.message)) {
      // S3 reports a missing key grant as AccessDenied naming the KMS action.
      return fail(
        'put',
        'target_misconfigured',
        `the bucket's encryption key cannot be used: KMS access denied: ${what}`,
        failure.statusCode,
      );
    }
    if (['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AllAccessDisabled'].includes(failure.code)) {
      if (request.connection.roleArn !== null) this.deps.sessions.forget(sessionRequest(request));
      return fail(
        'put',
        'assume_role_denied',
        `PutObject on '${request.bucket}/${request.key}' was denied: ${what}`,
        failure.statusCode,
      );
    }
    if (
      ['ExpiredToken', 'InvalidToken', 'TokenRefreshRequired'].includes(failure.code) &&
      request.connection.roleArn !== null
    ) {
      this.deps.sessions.forget(sessionRequest(request));
    }
    if (
      ['PermanentRedirect', 'AuthorizationHeaderMalformed', 'IllegalLocationConstraintException'].includes(failure.code)
    ) {
      this.deps.regions.forget(target, request.bucket);
    }
    return transient('put', failure);
  }

  private backoff<T>(call: () => Promise<Step<T>>, deadline: number) {
    const { config, sleep, random, now } = this.deps;
    return withThrottleBackoff(call, (step) => (!step.ok && isThrottle(step.failure) ? describe(step.failure) : null), {
      baseDelayMs: config.throttleBaseDelayMs,
      maxDelayMs: Math.max(config.throttleBaseDelayMs, 20_000),
      retries: config.throttleRetries,
      deadline,
      sleep,
      random,
      now,
    });
  }
}

function sessionRequest(request: WriteScope): SessionRequest {
  return {
    connectionId: request.connection.id,
    roleArn: request.connection.roleArn as string,
    externalId: request.connection.externalId,
    bucket: request.bucket,
    keyPrefix: request.keyPrefix,
  };
}

function fail(
  stage: WriteStage,
  errorClass: WriteFailureClass,
  detail: string,
  statusCode: number | null,
): WriteOutcome {
  return { ok: false, stage, errorClass, detail, statusCode };
}

function throttled(stage: WriteStage, tries: number, detail: string): WriteOutcome {
  return fail(stage, 'throttled', `still throttled after ${tries} tries with backoff: ${detail}`, 503);
}

function transient(stage: WriteStage, failure: AwsFailure): WriteOutcome {
  if (isTimeout(failure)) return fail(stage, 'timeout', describe(failure), null);
  if (isNetworkError(failure)) return fail(stage, 'network', describe(failure), null);
  return fail(stage, 'storage_error', describe(failure), failure.statusCode);
}

/** The writer of one process, from the config: one STS client, session and region caches. */
export function bucketWriterFromConfig(config: Config): BucketWriter {
  const clients = new AwsClients(config.objectStore);
  // Session expiry, deadlines and backoff are wall-clock matters (AWS's time), not the scheduler's.
  const now = () => Date.now();
  return new BucketWriter({
    clients,
    sessions: new RoleSessions(clients.sts, { durationSeconds: config.objectStore.sessionSeconds, now }),
    regions: new BucketRegions(clients, { now }),
    config: config.objectStore,
    secretKey: config.secretKey,
    now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    random: Math.random,
  });
}
