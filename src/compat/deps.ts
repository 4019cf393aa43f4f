/** What the provider-compatible routes are given, and the public base URL of the links they hand out. */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.js';
import type { CompatLimits } from '../domain/compat-limits.js';
import type { BearerKeyConfig } from '../http/auth.js';
import type { Database } from '../store/database.js';
import type { IntakeDeps } from './batch-intake.js';
import type { ProgressDeps } from './batch-progress.js';

export interface CompatDeps {
  database: Database;
  clock: Clock;
  /** How batches are created (without the logger: each request's own is used). */
  intake: Omit<IntakeDeps, 'log'>;
  /** How long a lease of a batch's creator, of a batch whose files are being made, or of a file being written runs. */
  leaseMs: number;
  /** BARGE_PUBLIC_BASE_URL when set. */
  explicitPublicBaseUrl: string | null;
  /** The largest one request of a batch may be: barge's cargo body limit (BARGE_BODY_LIMIT_BYTES). */
  maxRequestBytes: number;
  /** The batch and file limits (BARGE_COMPAT_*). */
  limits: CompatLimits;
  /** The app's body limit, for answering framework errors (body too large) as the rest of the app does. */
  bodyLimitBytes: number;
}

/** The progress and intake dependencies, with the request's logger. */
export function progressDeps(deps: CompatDeps, log: FastifyBaseLogger): ProgressDeps {
  return { database: deps.database, clock: deps.clock, leaseMs: deps.leaseMs, log };
}

/** Where links handed out start: BARGE_PUBLIC_BASE_URL, else the scheme and Host of the request that asked. */
export function publicBaseOf(request: FastifyRequest, deps: Pick<CompatDeps, 'explicitPublicBaseUrl'>): string {
  return deps.explicitPublicBaseUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * Every route registered in `scope` from here on takes the project key as `Authorization: Bearer`
 * too (the SDKs send it so), besides X-API-Key.
 */
export function takeBearerKeys(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, bearerApiKey: true } satisfies BearerKeyConfig as typeof route.config;
  });
}
