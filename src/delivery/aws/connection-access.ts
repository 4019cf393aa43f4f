/**
 * How every AWS delivery target (object store, SQS, SNS, EventBridge) gets credentials through a
 * project's connection: an assumed-role session scoped by a session policy to the one action on
 * the one resource, or a connection's static credentials. Failures come back as classified
 * values; throttling is backed off within the attempt (withAwsBackoff).
 */
import type { Config, ObjectStoreConfig } from '../../config.js';
import { openSecret } from '../../domain/secret-box.js';
import type { Connection } from '../../store/admin/connections.js';
import { AwsClients, type SigningCredentials } from './aws-clients.js';
import { type AwsFailure, describe, isThrottle, isTimeout } from './aws-errors.js';
import { RoleSessions } from './role-sessions.js';
import { isThrottledResult, type Throttled, withThrottleBackoff } from './throttle-backoff.js';

export interface AwsDeliveryDeps {
  clients: AwsClients;
  sessions: RoleSessions;
  config: ObjectStoreConfig;
  secretKey: Buffer | null;
  /** Wall clock, for deadlines and backoff (AWS's time, not the scheduler's). */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

/** A failure of getting access: the class tracking and the attempt log show, and its text. */
export interface AccessFailure {
  errorClass: 'assume_role_denied' | 'assume_role_failed' | 'timeout' | 'throttled' | 'connection_unusable';
  detail: string;
  statusCode: number | null;
}

export type Access = { ok: true; credentials: SigningCredentials } | { ok: false; failure: AccessFailure };

export async function connectionCredentials(
  deps: AwsDeliveryDeps,
  connection: Connection,
  policy: string,
  signal: AbortSignal,
  deadline: number,
): Promise<Access> {
  if (connection.roleArn === null) {
    const opened = openStaticCredentials(deps, connection);
    if (opened) return { ok: true, credentials: opened };
    return {
      ok: false,
      failure: {
        errorClass: 'connection_unusable',
        detail: `the static credentials of ${connection.id} cannot be opened: BARGE_SECRET_KEY is missing or not the key they were stored with`,
        statusCode: null,
      },
    };
  }
  const roleArn = connection.roleArn;
  const session = await withAwsBackoff(
    deps,
    async () => {
      const outcome = await deps.sessions.get(
        { connectionId: connection.id, roleArn, externalId: connection.externalId, policy },
        signal,
      );
      return outcome.ok ? { ok: true as const, value: outcome.credentials } : outcome;
    },
    deadline,
  );
  if (isThrottledResult(session)) return { ok: false, failure: throttledFailure(session.tries, session.detail) };
  if (session.ok) return { ok: true, credentials: session.value };
  const { failure } = session;
  if (failure.code === 'AccessDenied' || failure.statusCode === 403) {
    return {
      ok: false,
      failure: {
        errorClass: 'assume_role_denied',
        detail: `AssumeRole of ${roleArn} was denied: ${describe(failure)}`,
        statusCode: failure.statusCode,
      },
    };
  }
  if (isTimeout(failure)) {
    return {
      ok: false,
      failure: { errorClass: 'timeout', detail: `AssumeRole: ${describe(failure)}`, statusCode: null },
    };
  }
  return {
    ok: false,
    failure: {
      errorClass: 'assume_role_failed',
      detail: `AssumeRole of ${roleArn} failed: ${describe(failure)}`,
      statusCode: failure.statusCode,
    },
  };
}

/** Drops the cached session for this policy, so the next attempt assumes the role afresh. */
export function forgetSession(deps: AwsDeliveryDeps, connection: Connection, policy: string): void {
  if (connection.roleArn === null) return;
  deps.sessions.forget({
    connectionId: connection.id,
    roleArn: connection.roleArn,
    externalId: connection.externalId,
    policy,
  });
}

function openStaticCredentials(deps: AwsDeliveryDeps, connection: Connection): SigningCredentials | null {
  if (connection.sealedCredentials === null || deps.secretKey === null) return null;
  const text = openSecret(deps.secretKey, connection.sealedCredentials, connection.id);
  if (text === null) return null;
  const parsed = JSON.parse(text) as { accessKeyId: string; secretAccessKey: string };
  return { accessKeyId: parsed.accessKeyId, secretAccessKey: parsed.secretAccessKey };
}

export type Step<T> = { ok: true; value: T } | { ok: false; failure: AwsFailure };

/** Runs one AWS call, retrying throttling with the service's own backoff until `deadline`. */
export function withAwsBackoff<T>(
  deps: AwsDeliveryDeps,
  call: () => Promise<Step<T>>,
  deadline: number,
): Promise<Throttled<Step<T>>> {
  const { config, sleep, random, now } = deps;
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

export function throttledFailure(tries: number, detail: string): AccessFailure & { errorClass: 'throttled' } {
  return {
    errorClass: 'throttled',
    detail: `still throttled after ${tries} tries with backoff: ${detail}`,
    statusCode: 503,
  };
}

/** The AWS side of one process, from the config: one STS client and a session cache. */
export function awsDeliveryDeps(config: Config): AwsDeliveryDeps {
  const clients = new AwsClients(config.objectStore, config.awsEndpoints);
  // Session expiry, deadlines and backoff are wall-clock matters (AWS's time), not the scheduler's.
  const now = () => Date.now();
  return {
    clients,
    sessions: new RoleSessions(clients.sts, { durationSeconds: config.objectStore.sessionSeconds, now }),
    config: config.objectStore,
    secretKey: config.secretKey,
    now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    random: Math.random,
  };
}
