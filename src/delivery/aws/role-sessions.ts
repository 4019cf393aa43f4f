/** Assumed-role sessions per connection and target, cached until shortly before they expire. */
import { AssumeRoleCommand, type STSClient } from '@aws-sdk/client-sts';
import { rememberBounded } from '../../bounded-map.js';
import { roleSessionName } from '../../domain/session-policy.js';
import type { SigningCredentials } from './aws-clients.js';
import { type AwsFailure, awsFailure } from './aws-errors.js';

export interface SessionRequest {
  connectionId: string;
  roleArn: string;
  externalId: string;
  /** The session policy (JSON): the one action on the one resource this session is for. */
  policy: string;
}

export type SessionOutcome = { ok: true; credentials: SigningCredentials } | { ok: false; failure: AwsFailure };

interface CachedSession {
  credentials: SigningCredentials;
  /** Wall-clock ms after which the session is not handed out any more. */
  useUntil: number;
}

export interface RoleSessionsOptions {
  durationSeconds: number;
  /** Wall clock: session expiry is AWS's time, not the scheduler's. */
  now: () => number;
  /** Stop using a session this long before it expires, so no request is signed with a dying one. */
  refreshMarginMs?: number;
  maxEntries?: number;
}

/**
 * Temporary credentials per (connection, session policy): the policy names the target (a bucket
 * and prefix, a queue, a topic, an event bus), so each target has its own session. Cached until shortly before they expire; a
 * bounded map (oldest out first), and concurrent deliveries to one target share one AssumeRole.
 * Credentials live only here, in memory, and are never logged.
 */
export class RoleSessions {
  private readonly cache = new Map<string, CachedSession>();
  private readonly inFlight = new Map<string, Promise<SessionOutcome>>();
  private readonly refreshMarginMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly sts: STSClient,
    private readonly options: RoleSessionsOptions,
  ) {
    this.refreshMarginMs = options.refreshMarginMs ?? 5 * 60_000;
    this.maxEntries = options.maxEntries ?? 1000;
  }

  async get(request: SessionRequest, signal: AbortSignal): Promise<SessionOutcome> {
    const key = cacheKey(request);
    const cached = this.cache.get(key);
    if (cached && cached.useUntil > this.options.now()) return { ok: true, credentials: cached.credentials };
    this.cache.delete(key);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.assume(key, request, signal).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** Drops a session S3 refused, so the next attempt assumes the role afresh. */
  forget(request: SessionRequest): void {
    this.cache.delete(cacheKey(request));
  }

  private async assume(key: string, request: SessionRequest, signal: AbortSignal): Promise<SessionOutcome> {
    try {
      const output = await this.sts.send(
        new AssumeRoleCommand({
          RoleArn: request.roleArn,
          RoleSessionName: roleSessionName(request.connectionId),
          ExternalId: request.externalId,
          Policy: request.policy,
          DurationSeconds: this.options.durationSeconds,
        }),
        { abortSignal: signal },
      );
      const c = output.Credentials;
      if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken) {
        return {
          ok: false,
          failure: {
            code: 'IncompleteCredentials',
            statusCode: 200,
            message: 'STS answered without credentials',
            headers: {},
          },
        };
      }
      const credentials: SigningCredentials = {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
        ...(c.Expiration ? { expiration: c.Expiration } : {}),
      };
      const expiresAt = c.Expiration?.getTime() ?? this.options.now() + this.options.durationSeconds * 1000;
      this.remember(key, { credentials, useUntil: expiresAt - this.refreshMarginMs });
      return { ok: true, credentials };
    } catch (err) {
      return { ok: false, failure: awsFailure(err) };
    }
  }

  private remember(key: string, session: CachedSession): void {
    rememberBounded(this.cache, key, session, this.maxEntries);
  }
}

function cacheKey(request: SessionRequest): string {
  return JSON.stringify([request.connectionId, request.roleArn, request.externalId, request.policy]);
}
