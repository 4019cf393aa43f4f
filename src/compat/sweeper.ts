/**
 * The sweeper of the provider-compatible endpoints, run by the pipeline worker's purger: what a
 * crash left half done is finished or removed, and what is past its retention is deleted.
 * - a batch being created whose creator's lease lapsed is deleted (nothing of it was visible),
 *   and a batch whose deletion a crash interrupted is finished;
 * - a batch whose publish began (it is committed to) and whose publisher died between two of its
 *   chunks is published on from where it stopped, under a lease taken over;
 * - staged rows of a failed batch (a crash right after) are dropped;
 * - a cancel asked more than a lease ago and not seen through is finished;
 * - an upload or output file left unfinished is deleted, and files past their retention;
 * - batches are deleted BATCH_RETENTION_MS after their creation (their cargo stay).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { markCompatCancelDone } from '../store/compat/batches.js';
import { CompatLeaseLost, takeOverCompatPublish, unfinishedCompatPublishes } from '../store/compat/create.js';
import {
  deleteCompatBatch,
  deletedCompatBatches,
  dropBatchRows,
  purgeDeletedCompatBatch,
} from '../store/compat/delete.js';
import {
  abandonedCompatFiles,
  deleteCompatFile,
  expiredCompatFiles,
  nextCompatFileDue,
} from '../store/compat/files.js';
import {
  abandonedCompatBatches,
  batchesWithLeftoverStaging,
  expiredCompatBatches,
  nextCompatBatchDue,
  unfinishedCompatCancels,
} from '../store/compat/sweep.js';
import type { Database } from '../store/database.js';
import { finishCompatCancel } from './batch-cancel.js';
import { publishStaged } from './batch-publish.js';

/** A batch (its request list, its results file) is kept this long after its creation (Anthropic keeps results 29 days). */
export const BATCH_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Items of each kind one sweep handles at most; the rest wait for the next (due at once). */
const SWEEP_LIMIT = 20;

export interface SweepDeps {
  database: Database;
  clock: Clock;
  /** The creators' lease: a cancel not done this long after it was asked is finished here. */
  leaseMs: number;
  /** The most one publish transaction moves (tests make it small). */
  publishChunk?: { rows: number; bytes: number };
}

/** One sweep; how many items it handled and when the next is due. */
export async function sweepCompat(deps: SweepDeps): Promise<{ swept: number; nextDueAt: number | null }> {
  const { database, clock } = deps;
  const now = clock.now();
  let swept = 0;
  for (const id of await abandonedCompatBatches(database, now, SWEEP_LIMIT)) {
    if (await deleteCompatBatch(database, id, { kind: 'abandoned' }, now)) swept++;
  }
  for (const id of await unfinishedCompatPublishes(database, now, SWEEP_LIMIT)) {
    const me = randomUUID();
    if (!(await takeOverCompatPublish(database, { batchId: id, lockedBy: me, now, lockedUntil: now + deps.leaseMs }))) {
      continue;
    }
    try {
      await publishStaged({ ...deps, ...(deps.publishChunk ? { chunk: deps.publishChunk } : {}) }, id, me);
      swept++;
    } catch (err) {
      // Another sweeper took it over meanwhile (this one stalled past its lease): it goes on.
      if (!(err instanceof CompatLeaseLost)) throw err;
    }
  }
  for (const id of await deletedCompatBatches(database, now - deps.leaseMs, SWEEP_LIMIT)) {
    await purgeDeletedCompatBatch(database, id);
    swept++;
  }
  for (const id of await batchesWithLeftoverStaging(database, SWEEP_LIMIT)) {
    await dropBatchRows(database, 'compat_staged_cargo', id);
    swept++;
  }
  for (const row of await unfinishedCompatCancels(database, now - deps.leaseMs, SWEEP_LIMIT)) {
    if (row.state === 'open') await finishCompatCancel(database, clock, row);
    else await markCompatCancelDone(database, row.id);
    swept++;
  }
  const files = [
    ...(await abandonedCompatFiles(database, now, SWEEP_LIMIT)),
    ...(await expiredCompatFiles(database, now, SWEEP_LIMIT)),
  ];
  for (const id of files) {
    if (await deleteCompatFile(database, id, { lapsedBefore: now })) swept++;
  }
  for (const id of await expiredCompatBatches(database, now - BATCH_RETENTION_MS, SWEEP_LIMIT)) {
    if (await deleteCompatBatch(database, id, { kind: 'expired' }, now)) swept++;
  }
  const due = [
    await nextCompatBatchDue(database, { cancelGraceMs: deps.leaseMs, retentionMs: BATCH_RETENTION_MS }),
    await nextCompatFileDue(database),
  ].filter((at): at is number => at !== null);
  return { swept, nextDueAt: swept > 0 ? now : due.length > 0 ? Math.min(...due) : null };
}
