/** The disk guard: new cargo are refused (503) before the database's storage runs out. */
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errors } from '../domain/errors.js';
import type { Database } from '../store/database.js';
import { databaseSizeBytes } from '../store/storage-usage.js';

/** Clients refused for lack of storage are told to come back after this long. */
const RETRY_AFTER_SECONDS = 60;
/** statfs is one cheap system call; the size of a PostgreSQL database walks its files. */
const SQLITE_CHECK_MS = 1000;
const POSTGRES_CHECK_MS = 10_000;

export interface DiskGuard {
  /** Throws 503 storage_full when `bytes` more would pass the floor (0: is it passed already?). */
  check(bytes: number): Promise<void>;
}

/**
 * Refuses new cargo before the storage is full, whatever the projects' budgets add up to.
 *
 * - SQLite file: the free space of the file system holding the database file (statfs, read at
 *   most once a second) must stay above `minFreeDiskBytes`.
 * - PostgreSQL: barge cannot see the server's disk. It can ask the database's size
 *   (pg_database_size, at most every 10 s) and refuse past `maxDatabaseBytes`, which the operator
 *   sets below what the server's volume holds; unset, there is no guard and the server's own
 *   monitoring must watch the disk. The size counts every schema of the database.
 * - SQLite in memory: nothing to guard.
 */
export function diskGuard(
  database: Database,
  options: { minFreeDiskBytes: number; maxDatabaseBytes: number | null },
): DiskGuard | null {
  if (database.file !== null) {
    const directory = dirname(database.file);
    const free = cached(SQLITE_CHECK_MS, async () => {
      const stats = await statfs(directory);
      return Number(stats.bavail) * Number(stats.bsize);
    });
    return {
      async check(bytes) {
        if ((await free()) - bytes < options.minFreeDiskBytes) throw errors.storageFull(RETRY_AFTER_SECONDS);
      },
    };
  }
  const max = options.maxDatabaseBytes;
  if (database.dialect === 'postgres' && max !== null) {
    const size = cached(POSTGRES_CHECK_MS, () => databaseSizeBytes(database));
    return {
      async check(bytes) {
        if ((await size()) + bytes > max) throw errors.storageFull(RETRY_AFTER_SECONDS);
      },
    };
  }
  return null;
}

/** The value of `read`, read again at most every `ms`; concurrent callers share one read. */
function cached(ms: number, read: () => Promise<number>): () => Promise<number> {
  let value = 0;
  let readAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<number> | null = null;
  return async () => {
    if (performance.now() - readAt < ms) return value;
    pending ??= read()
      .then((v) => {
        value = v;
        readAt = performance.now();
        return v;
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };
}
