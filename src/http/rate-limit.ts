/** The per-project rate limit of the cargo routes, counted in this process, in Redis, or in the database. */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';
import { errors } from '../domain/errors.js';
import type { Database } from '../store/database.js';
import { isDatabaseUnavailable } from '../store/outage.js';
import { addRateLimitHits, deleteRateLimitWindowsBefore } from '../store/rate-limits.js';

type IncrCallback = (err: Error | null, result?: { current: number; ttl: number }) => void;

/** How often a process adds its local counts to the shared windows (and learns the others'). */
export const RATE_LIMIT_SYNC_MS = 100;

interface Window {
  start: number;
  /** The window's total across processes, as of the last sync. */
  known: number;
  /** Hits this process counted in the window, and how many of them the last sync added. */
  local: number;
  sent: number;
  /** When `known` was last learned (performance.now()). */
  syncedAt: number;
}

/**
 * Fixed windows shared through the database without a write per request: each process counts
 * locally and adds what it counted to the windows' rows in one upsert, which returns the totals of
 * every process. A request is judged on the last total plus this process's own hits since; when
 * that total is older than RATE_LIMIT_SYNC_MS the request waits for a sync (one for all the
 * requests arriving meanwhile), so with N processes a project can pass its limit by at most what
 * the other N - 1 accepted in one sync interval. At most one write per process per interval, and a
 * timer adds the last counts when requests stop. Used on PostgreSQL without Redis.
 */
export class SyncedWindows {
  private readonly windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private lastSweep = 0;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Counts a hit; the window's total as this process knows it, and ms until the window ends. */
  async hit(key: string): Promise<{ current: number; ttl: number }> {
    const now = this.clock.now();
    const start = now - (now % this.windowMs);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, known: 0, local: 0, sent: 0, syncedAt: Number.NEGATIVE_INFINITY };
      this.windows.set(key, window);
    }
    // This hit's place among this process's: hits counted after it do not count against it.
    const place = ++window.local;
    this.schedule();
    for (let tries = 0; performance.now() - window.syncedAt >= RATE_LIMIT_SYNC_MS && tries < 2; tries++) {
      await (this.syncing ?? this.sync());
    }
    return { current: window.known + place - window.sent, ttl: start + this.windowMs - now };
  }

  /** Adds every pending count now (and waits for a sync in flight). */
  async sync(): Promise<void> {
    // One sync at a time: a second one started meanwhile would send the same counts again.
    while (this.syncing) await this.syncing;
    const sending = [...this.windows]
      .filter(([, w]) => w.local > w.sent)
      .map(([key, w]) => ({ key, w, upTo: w.local }));
    if (sending.length === 0) return;
    const counts = sending.map(({ key, w, upTo }) => ({ key, windowStart: w.start, hits: upTo - w.sent }));
    this.syncing = (async () => {
      try {
        const asOf = performance.now();
        const totals = new Map((await addRateLimitHits(this.database, counts)).map((t) => [t.key, t.hits]));
        for (const { key, w, upTo } of sending) {
          const total = totals.get(key);
          if (total === undefined) continue;
          w.sent = upTo;
          w.known = Math.max(w.known, total);
          w.syncedAt = asOf;
        }
      } catch (err) {
        // Not lost: what was not added is sent again at the next sync.
        this.onError(err);
      }
      this.sweep();
    })();
    try {
      await this.syncing;
    } finally {
      this.syncing = null;
    }
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.sync().then(() => {
        if ([...this.windows.values()].some((w) => w.local > w.sent)) this.schedule();
      });
    }, RATE_LIMIT_SYNC_MS);
    this.timer.unref();
  }

  /** Forgets windows that ended, here and (once a window) in the database. */
  private sweep(): void {
    const { windowMs } = this;
    const now = this.clock.now();
    const current = now - (now % windowMs);
    for (const [key, w] of this.windows) if (w.start < current && w.local === w.sent) this.windows.delete(key);
    if (now - this.lastSweep > windowMs) {
      this.lastSweep = now;
      deleteRateLimitWindowsBefore(this.database, current - windowMs).catch(this.onError);
    }
  }
}

export interface RateLimitOptions {
  database: Database;
  clock: Clock;
  /** Where the count lives: this process (one SQLite process), Redis, or the database in batches. */
  shared: { kind: 'local' } | { kind: 'redis'; redis: Redis } | { kind: 'database' };
  max: number;
  windowMs: number;
  projectOf: (request: FastifyRequest) => { projectId: string; rateLimitMax: number | null };
}

/** Per-project limits; routes opt in with `app.rateLimit()` after authentication has run. */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  const { shared } = options;
  let store = {};
  // Redis out of reach lets requests through (logged) rather than failing every one of them.
  if (shared.kind === 'redis') store = { redis: shared.redis, nameSpace: 'barge-rate-limit-', skipOnError: true };
  if (shared.kind === 'database') {
    // An outage is reported once by the store; the counts are added again at the next sync.
    const windows = new SyncedWindows(options.database, options.clock, options.windowMs, (err) => {
      if (!isDatabaseUnavailable(err)) app.log.warn({ err }, 'could not sync rate-limit counts');
    });
    app.addHook('onClose', async () => {
      windows.close();
      await windows.sync().catch(() => {});
    });
    store = {
      store: class {
        incr(key: string, callback: IncrCallback): void {
          windows.hit(key).then(
            (result) => callback(null, result),
            (err: Error) => callback(err),
          );
        }
        child() {
          return this;
        }
      },
    };
  }
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    timeWindow: options.windowMs,
    max: (request) => options.projectOf(request).rateLimitMax ?? options.max,
    keyGenerator: (request) => options.projectOf(request).projectId,
    errorResponseBuilder: (_request, context) => errors.rateLimited(Math.ceil(context.ttl / 1000)),
    ...store,
  });
}
