/** The per-project storage budget checked at submit: bytes accepted per UTC day, and bytes held. */

import { rememberBounded } from '../bounded-map.js';
import type { Clock } from '../domain/clock.js';
import { DAY_MS } from '../domain/clock.js';
import { errors } from '../domain/errors.js';
import type { Database } from '../store/database.js';
import { readStorageUsage, type StorageUsage, utcDayStart } from '../store/storage-usage.js';
import type { AuthContext } from './auth.js';

/** A project over its held-bytes budget is told to come back after this long (results expire over time). */
const HELD_RETRY_AFTER_SECONDS = 600;

/**
 * The per-project storage budget at submit: bytes accepted per UTC day, and bytes held (requests,
 * metadata and results not yet purged). The counters live in the database (store/storage-usage.ts,
 * moved in the insert's transaction); this process reads a project's row at most every `checkMs`
 * and adds what it accepted itself meanwhile. So the check costs no query on most requests, and
 * with several API processes a project can overshoot its budget by at most what the other
 * processes accepted for it within `checkMs`, plus the requests in flight at that moment.
 */
export class StorageBudget {
  private readonly usage = new Map<string, { usage: StorageUsage; readAt: number }>();
  private readonly reads = new Map<string, Promise<StorageUsage>>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly options: { dailyBytes: number; heldBytes: number; checkMs: number; maxProjects?: number },
  ) {}

  /** Throws the 429 when `bytes` more would exceed the project's budget (0: is it already spent?). */
  async check(auth: AuthContext, bytes: number): Promise<void> {
    const usage = await this.current(auth.projectId);
    const now = this.clock.now();
    const today = utcDayStart(now);
    const daily = auth.byteBudget.daily ?? this.options.dailyBytes;
    const dayBytes = usage.day === today ? usage.dayBytes : 0;
    if (dayBytes >= daily || dayBytes + bytes > daily) {
      throw errors.dailyByteBudgetExceeded(daily, Math.max(1, Math.ceil((today + DAY_MS - now) / 1000)));
    }
    const held = auth.byteBudget.held ?? this.options.heldBytes;
    if (usage.heldBytes >= held || usage.heldBytes + bytes > held) {
      throw errors.heldByteBudgetExceeded(held, HELD_RETRY_AFTER_SECONDS);
    }
  }

  /** What this process just committed counts at once, before its next read of the counters. */
  accepted(projectId: string, bytes: number, at: number): void {
    const entry = this.usage.get(projectId);
    if (!entry) return;
    const day = utcDayStart(at);
    if (entry.usage.day !== day) entry.usage = { ...entry.usage, day, dayBytes: 0 };
    entry.usage = { ...entry.usage, heldBytes: entry.usage.heldBytes + bytes, dayBytes: entry.usage.dayBytes + bytes };
  }

  private async current(projectId: string): Promise<StorageUsage> {
    const entry = this.usage.get(projectId);
    if (entry && performance.now() - entry.readAt < this.options.checkMs) return entry.usage;
    // Concurrent requests of one project share one read.
    let read = this.reads.get(projectId);
    if (!read) {
      read = readStorageUsage(this.database, projectId).finally(() => this.reads.delete(projectId));
      this.reads.set(projectId, read);
    }
    const usage = await read;
    rememberBounded(this.usage, projectId, { usage, readAt: performance.now() }, this.options.maxProjects ?? 10_000);
    return usage;
  }
}
