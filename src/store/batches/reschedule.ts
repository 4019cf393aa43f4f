/**
 * The moves a leased batch makes after a look, each guarded by the lease: schedule the next look,
 * note a cancel requested at the provider, end it.
 */
import type { Database } from '../database.js';
import { type BatchLease, leasedBatchUpdate } from '../leases.js';

/**
 * Releases the lease and schedules the next look, optionally recording a failed attempt (`error`),
 * and whether the provider refused it (`refused`, counted apart: the batch fails on the third).
 */
export async function rescheduleBatch(
  database: Database,
  input: BatchLease & {
    nextCheckAt: number;
    now: number;
    error?: string;
    refused?: boolean;
    polled?: boolean;
    /**
     * The provider answered the create with a refusal (a 429 or a 4xx), so no job was made, and
     * no earlier try's answer was lost: there is no job to look for before the next try.
     */
    noJobMade?: boolean;
  },
): Promise<void> {
  await leasedBatchUpdate(database, input)
    .set((eb) => ({
      next_check_at: input.nextCheckAt,
      locked_by: null,
      locked_until: null,
      updated_at: input.now,
      ...(input.error === undefined ? {} : { last_error: input.error, attempts: eb('attempts', '+', 1) }),
      ...(input.refused ? { refusals: eb('refusals', '+', 1) } : {}),
      ...(input.polled ? { poll_count: eb('poll_count', '+', 1) } : {}),
      ...(input.noJobMade ? { submit_started_at: null } : {}),
    }))
    .execute();
}

export async function markBatchCanceled(database: Database, input: BatchLease & { now: number }): Promise<void> {
  await leasedBatchUpdate(database, input).set({ canceled_at: input.now, updated_at: input.now }).execute();
}

export async function markBatchEnded(
  database: Database,
  input: BatchLease & { reason: string; now: number },
): Promise<void> {
  await leasedBatchUpdate(database, input)
    .set({
      status: 'ended',
      end_reason: input.reason,
      ended_at: input.now,
      locked_by: null,
      locked_until: null,
      updated_at: input.now,
    })
    .execute();
}
