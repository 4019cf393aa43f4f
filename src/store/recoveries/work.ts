/**
 * Working through a bulk recovery under a lease: each chunk's redeliveries, and the advance of its
 * cursor and counts, in one transaction that first checks the lease. A worker killed mid-chunk
 * commits nothing of it; whoever takes the lease over next starts after the last committed chunk:
 * no cargo is redelivered twice by one recovery.
 */

import type { Database } from '../database.js';
import { scheduleRedeliveries } from '../deliveries/redeliver.js';
import { claimDue, nextDueAt, releaseLeases } from '../leases.js';
import { resultsStoredNotice } from '../notify.js';
import { readSetPage } from './cargo-set.js';

/**
 * Leases the running recovery due first, or the one named, if no live lease is held on it: its
 * id; else, for the one due first, when to look again (null: none is running).
 */
export async function claimRecovery(
  database: Database,
  input: { workerId: string; now: number; leaseMs: number; recoveryId?: string },
): Promise<{ id: string } | { id: null; nextAt: number | null }> {
  const { recoveryId, ...lease } = input;
  if (recoveryId === undefined) {
    // A read first: the delivery workers look at every wake-up, and recoveries are rare; the
    // claim's write transaction (SQLite's one writer) is taken only when one may be due.
    const nextAt = await nextDueAt(database, 'recoveries', { status: 'running' });
    if (nextAt === null || nextAt > lease.now) return { id: null, nextAt };
    const [claimed] = await claimDue(database, 'recoveries', { status: 'running', ...lease, limit: 1 });
    // Another worker claimed it first: its lease lapses by then at the latest.
    return claimed ? { id: claimed.id } : { id: null, nextAt: lease.now + lease.leaseMs };
  }
  // One row, one statement: of two concurrent claims one wins.
  const claimed = await database.write
    .updateTable('recoveries')
    .set({ locked_by: lease.workerId, locked_until: lease.now + lease.leaseMs })
    .where('id', '=', recoveryId)
    .where('status', '=', 'running')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', lease.now)]))
    .returning('id')
    .executeTakeFirst();
  return claimed ? { id: claimed.id } : { id: null, nextAt: null };
}

export type ChunkOutcome =
  /** Another worker holds the recovery now, or it was canceled: nothing was done. */
  { kind: 'stopped' } | { kind: 'progress' | 'completed'; redelivered: number };

/**
 * Redelivers the next chunk of a recovery this worker holds: looks at up to `size` candidates
 * after its cursor and schedules a redelivery of each in the set; extends the lease, or completes
 * the recovery (and drops the lease) once nothing is left.
 */
export async function recoverChunk(
  database: Database,
  input: { recoveryId: string; workerId: string; now: number; leaseMs: number; size: number },
): Promise<ChunkOutcome> {
  const { now } = input;
  return database.write.transaction().execute(async (tx) => {
    const job = await tx
      .selectFrom('recoveries')
      .selectAll()
      .where('id', '=', input.recoveryId)
      .where('locked_by', '=', input.workerId)
      .where('status', '=', 'running')
      .$if(database.dialect === 'postgres', (qb) => qb.forUpdate())
      .executeTakeFirst();
    if (!job) return { kind: 'stopped' };
    const set = {
      projectId: job.project_id,
      cargoStatus: job.cargo_status,
      since: Number(job.since),
      until: Number(job.until),
      fixedAt: Number(job.created_at),
    };
    const page = await readSetPage(tx, set, job.cursor, input.size, database.dialect === 'postgres');
    if (page.cargo.length > 0) {
      await scheduleRedeliveries(tx, page.cargo, 'recovery', now);
      for (const notice of resultsStoredNotice(database)) await tx.executeQuery(notice);
    }
    const redelivered = job.redelivered + page.cargo.length;
    // Once the set is exhausted, every cargo of it was handled: redelivered, or found to have left
    // the status since (a redelivery meanwhile, a purge), which `total` counted and nothing redoes.
    const done = page.exhausted ? Math.max(job.total, redelivered) : Math.min(job.total, redelivered);
    await tx
      .updateTable('recoveries')
      .set({
        cursor: page.lastId ?? job.cursor,
        redelivered,
        done,
        updated_at: now,
        ...(page.exhausted
          ? { status: 'completed', finished_at: now, locked_by: null, locked_until: null }
          : { locked_until: now + input.leaseMs, next_run_at: now }),
      })
      .where('id', '=', job.id)
      .execute();
    return { kind: page.exhausted ? 'completed' : 'progress', redelivered: page.cargo.length };
  });
}

/** Gives a recovery back (its next chunk may go to any worker), if this worker still holds it. */
export async function releaseRecovery(
  database: Database,
  input: { recoveryId: string; workerId: string },
): Promise<void> {
  await database.write
    .updateTable('recoveries')
    .set({ locked_by: null, locked_until: null })
    .where('id', '=', input.recoveryId)
    .where('locked_by', '=', input.workerId)
    .execute();
}

/** Gives back every recovery a stopping worker holds. */
export const releaseRecoveries = (database: Database, workerId: string) =>
  releaseLeases(database, 'recoveries', workerId);
