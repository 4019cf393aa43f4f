/** Writing one object into a customer's bucket through a connection, every failure returned as a classified value. */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Config } from '../../config.js';
import { sessionPolicyJson } from '../../domain/session-policy.js';
import type { Connection } from '../../store/admin/connections.js';
import type { S3Target, SigningCredentials } from '../aws/aws-clients.js';
import { type AwsFailure, awsFailure, describe, isNetworkError, isTimeout } from '../aws/aws-errors.js';
import {
  type AwsDeliveryDeps,
  awsDeliveryDeps,
  connectionCredentials,
  forgetSession,
  type Step,
  throttledFailure,
  withAwsBackoff,
} from '../aws/connection-access.js';
import { isThrottledResult } from '../aws/throttle-backoff.js';
import { BucketRegions } from './bucket-regions.js';

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

export interface BucketWriterDeps extends AwsDeliveryDeps {
  regions: BucketRegions;
}

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

    const located = await withAwsBackoff(
      this.deps,
      async () => {
        const outcome = await this.deps.regions.resolve(base, request.bucket, signal);
        return outcome.kind === 'failed'
          ? { ok: false as const, failure: outcome.failure }
          : { ok: true as const, value: outcome };
      },
      deadline,
    );
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

    const put = await withAwsBackoff(
      this.deps,
      async (): Promise<Step<WriteOutcome & { ok: true }>> => {
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
      },
      deadline,
    );
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
    const policy = sessionPolicyJson(request.bucket, request.keyPrefix);
    const access = await connectionCredentials(this.deps, request.connection, policy, signal, deadline);
    if (access.ok) return access;
    const { errorClass, detail, statusCode } = access.failure;
    return { ok: false, outcome: fail('access', errorClass, detail, statusCode) };
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
      forgetSession(this.deps, request.connection, sessionPolicyJson(request.bucket, request.keyPrefix));
      return fail(
        'put',
        'assume_role_denied',
        `PutObject on '${request.bucket}/${request.key}' was denied: ${what}`,
        failure.statusCode,
      );
    }
    if (['ExpiredToken', 'InvalidToken', 'TokenRefreshRequired'].includes(failure.code)) {
      forgetSession(this.deps, request.connection, sessionPolicyJson(request.bucket, request.keyPrefix));
    }
    if (
      ['PermanentRedirect', 'AuthorizationHeaderMalformed', 'IllegalLocationConstraintException'].includes(failure.code)
    ) {
      this.deps.regions.forget(target, request.bucket);
    }
    return transient('put', failure);
  }
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
  const failure = throttledFailure(tries, detail);
  return fail(stage, failure.errorClass, failure.detail, failure.statusCode);
}

function transient(stage: WriteStage, failure: AwsFailure): WriteOutcome {
  if (isTimeout(failure)) return fail(stage, 'timeout', describe(failure), null);
  if (isNetworkError(failure)) return fail(stage, 'network', describe(failure), null);
  return fail(stage, 'storage_error', describe(failure), failure.statusCode);
}

/** The writer of one process, from the config: the shared AWS access and a bucket-region cache. */
export function bucketWriterFromConfig(config: Config, aws: AwsDeliveryDeps = awsDeliveryDeps(config)): BucketWriter {
  return new BucketWriter({ ...aws, regions: new BucketRegions(aws.clients, { now: aws.now }) });
}
