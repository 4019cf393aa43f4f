import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../domain/clock.js';
import { errors } from '../domain/errors.js';
import { countRateLimitHit, deleteRateLimitWindowsBefore } from '../store/rate-limits.js';
import type { Schema } from '../store/schema.js';

type IncrCallback = (err: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * A @fastify/rate-limit store whose fixed windows live in the database, so every API process
 * counts against the same number. Used on PostgreSQL; one SQLite process keeps them in memory.
 */
function databaseStore(db: Kysely<Schema>, clock: Clock) {
  let lastSweep = 0;
  return class DatabaseRateLimitStore {
    incr(key: string, callback: IncrCallback, timeWindow: number): void {
      const now = clock.now();
      const windowStart = now - (now % timeWindow);
      countRateLimitHit(db, key, windowStart).then(
        (current) => callback(null, { current, ttl: windowStart + timeWindow - now }),
        (err: Error) => callback(err),
      );
      if (now - lastSweep > timeWindow) {
        lastSweep = now;
        deleteRateLimitWindowsBefore(db, windowStart - timeWindow).catch(() => {});
      }
    }
    child() {
      return this;
    }
  };
}

export interface RateLimitOptions {
  db: Kysely<Schema>;
  clock: Clock;
  shared: boolean;
  max: number;
  windowMs: number;
  projectOf: (request: FastifyRequest) => { projectId: string; rateLimitMax: number | null };
}

/** Per-project limits; routes opt in with `app.rateLimit()` after authentication has run. */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    timeWindow: options.windowMs,
    max: (request) => options.projectOf(request).rateLimitMax ?? options.max,
    keyGenerator: (request) => options.projectOf(request).projectId,
    errorResponseBuilder: (_request, context) => errors.rateLimited(Math.ceil(context.ttl / 1000)),
    ...(options.shared ? { store: databaseStore(options.db, options.clock) } : {}),
  });
}
