/** Recording a batch the provider accepted: its job, its cargo moved to `processing`, one batch per job. */
import { movableFrom } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';

export interface SubmittedBatch {
  batchId: string;
  jobId: string;
  /** The adapter's state as of the job (see src/providers/provider.ts). */
  providerState: string | null;
  paddingCount: number;
  now: number;
  deadlineAt: number;
}

/**
 * The provider accepted the batch: record the job, move its cargo to `processing`, release. Not
 * guarded by the lease but by the batch having no job yet: a job the provider accepted must never
 * be dropped because the lease lapsed while the call was open. If another worker recorded a job
 * first, nothing changes and its job id comes back (the caller cancels its own duplicate). A job
 * another batch recorded is never recorded twice (`otherBatch`: an adopted job that was not ours).
 */
export async function markBatchSubmitted(
  database: Database,
  input: SubmittedBatch,
): Promise<{ recorded: true } | { recorded: false; jobId: string | null; otherBatch?: string }> {
  return database.write.transaction().execute(async (tx) => {
    const owner = await tx
      .selectFrom('batches as b')
      .innerJoin('batches as mine', 'mine.provider', 'b.provider')
      .select('b.id')
      .where('mine.id', '=', input.batchId)
      .where('b.job_id', '=', input.jobId)
      .where('b.id', '!=', input.batchId)
      .executeTakeFirst();
    if (owner) return { recorded: false, jobId: null, otherBatch: owner.id };
    const updated = await tx
      .updateTable('batches')
      .set({
        status: 'processing',
        job_id: input.jobId,
        provider_state: input.providerState,
        padding_count: input.paddingCount,
        submitted_at: input.now,
        deadline_at: input.deadlineAt,
        next_check_at: input.now,
        locked_by: null,
        locked_until: null,
        last_error: null,
        updated_at: input.now,
      })
      .where('id', '=', input.batchId)
      .where('status', '=', 'submitting')
      .where('job_id', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      const row = await tx.selectFrom('batches').select('job_id').where('id', '=', input.batchId).executeTakeFirst();
      return { recorded: false, jobId: row?.job_id ?? null };
    }
    await tx
      .updateTable('cargo')
      .set({ status: 'processing', updated_at: input.now })
      .where('batch_id', '=', input.batchId)
      .where('status', 'in', movableFrom('submit'))
      .execute();
    return { recorded: true };
  });
}
