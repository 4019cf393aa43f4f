/**
 * Database outages (a PostgreSQL restart, a failover, a proxy restart, a network cut): what counts
 * as one, how a process notices it and its end, and how work that must give something back to the
 * database rides it out. A process reports an outage once when it starts and once when it ends,
 * however many requests and steps fail meanwhile.
 */

/**
 * The database is restarting, failing over or out of reach (not a bad query): PostgreSQL's
 * admin-shutdown and cannot-connect class 57P, its connection-exception class 08, a refused or
 * reset socket, and the driver's own words for a connection that died under it. A request that
 * meets one is answered 503; a worker step retries it without logging it.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code = '', message = '' } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return false;
  return (
    code.startsWith('57P') ||
    code.startsWith('08') ||
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code) ||
    /^Connection terminated/.test(message) ||
    /^Client has encountered a connection error/.test(message) ||
    /^Client was closed and is not queryable/.test(message)
  );
}

/** While the database is unreachable, checked this often (doubling from the first), at most. */
const OUTAGE_PROBE_MS = { first: 250, max: 1000 };

export type OutageEvent = { state: 'down'; error: Error } | { state: 'up'; downMs: number };

/**
 * Watches one database for outages. `failed` is told of every connection-class failure; the first
 * one starts an outage: it is reported, and `probe` (one trivial query) runs with capped backoff
 * until it answers. Then the outage is reported over and every `onRecovery` handler runs (the
 * LISTEN connection reconnects, sleeping worker loops wake), at once rather than at the next retry.
 */
export class OutageWatch {
  private downSince: number | null = null;
  /** When the last outage was seen over. */
  private upAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly recovered: (() => void)[] = [];

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly report: (event: OutageEvent) => void,
  ) {}

  get down(): boolean {
    return this.downSince !== null;
  }

  onRecovery(handler: () => void): void {
    this.recovered.push(handler);
  }

  /**
   * `startedAt`: when the failed attempt began. One begun before the last outage was seen over
   * failed in that outage (a connection attempt refused while the database was starting, its
   * answer arriving after the probe's): it starts no new one.
   */
  failed(error: unknown, startedAt = Date.now()): void {
    if (this.closed || this.downSince !== null || !isDatabaseUnavailable(error)) return;
    if (startedAt < this.upAt) return;
    this.downSince = Date.now();
    this.report({ state: 'down', error: error instanceof Error ? error : new Error(String(error)) });
    this.schedule(OUTAGE_PROBE_MS.first);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.probe().then(
        () => this.up(),
        () => {
          if (!this.closed) this.schedule(Math.min(delay * 2, OUTAGE_PROBE_MS.max));
        },
      );
    }, delay);
    this.timer.unref();
  }

  private up(): void {
    if (this.closed || this.downSince === null) return;
    this.upAt = Date.now();
    const downMs = this.upAt - this.downSince;
    this.downSince = null;
    this.report({ state: 'up', downMs });
    for (const handler of this.recovered) handler();
  }
}

/**
 * Runs a write that gives work back to the database (an attempt's outcome, a lease returned with
 * the next try's time). Lost to an outage, its rows would sit leased to this process until the
 * lease ran out, minutes after the database was back; so while the database is unreachable the
 * write is tried again every second, for at most `forMs` (past the lease another process may have
 * taken the work, and the write's own `locked_by` guard refuses it). Other errors throw at once.
 */
export async function retryThroughOutage<T>(write: () => Promise<T>, forMs: number): Promise<T> {
  const deadline = Date.now() + forMs;
  for (;;) {
    try {
      return await write();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() + OUTAGE_RETRY_MS > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_RETRY_MS));
    }
  }
}

/** A worker step or a write that met an outage tries again after this (no growing backoff: the outage is reported once, and the retry is one refused connection). */
export const OUTAGE_RETRY_MS = 1000;
