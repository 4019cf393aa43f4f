/** Due batches: leasing those whose next check has come, and when the next one needs attention. */
import type { Selectable } from 'kysely';
import type { BatchStatus } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import { claimDue, nextDueAt } from '../leases.js';
import type { BatchesTable } from '../schema.js';

export type BatchRow = Selectable<BatchesTable>;

/**
 * Leases due batches in one status: unended, `next_check_at` reached and no live lease. The lease
 * is the only thing that keeps two workers off one batch; it lapses by itself if a worker dies.
 */
export function claimDueBatches(
  database: Database,
  input: {
    status: BatchStatus;
    workerId: string;
    now: number;
    leaseMs: number;
    limit: number;
    providersNot?: string[];
  },
): Promise<BatchRow[]> {
  return claimDue(database, 'batches', input);
}

/** The earliest time any unended batch needs attention (a due check or a lapsing lease). */
export function nextBatchCheckAt(database: Database): Promise<number | null> {
  return nextDueAt(database, 'batches', { statusNot: 'ended' });
}
