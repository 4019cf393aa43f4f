import type { Database } from './database.js';
import type { MockJobsTable } from './schema.js';

/**
 * svc-mock's job storage. Inserting the same batch id twice keeps the first job (idempotent
 * submit): in one transaction, so the job is read back in the snapshot it was (not) inserted in.
 */
export async function insertMockJob(database: Database, job: MockJobsTable): Promise<string> {
  return database.write.transaction().execute(async (tx) => {
    await tx
      .insertInto('mock_jobs')
      .values(job)
      .onConflict((oc) => oc.column('batch_id').doNothing())
      .execute();
    const row = await tx
      .selectFrom('mock_jobs')
      .select('id')
      .where('batch_id', '=', job.batch_id)
      .executeTakeFirstOrThrow();
    return row.id;
  });
}

export async function findMockJob(database: Database, jobId: string): Promise<MockJobsTable | undefined> {
  return database.read.selectFrom('mock_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}

export async function findMockJobState(
  database: Database,
  jobId: string,
): Promise<Pick<MockJobsTable, 'ends_at' | 'canceled_at'> | undefined> {
  return database.read
    .selectFrom('mock_jobs')
    .select(['ends_at', 'canceled_at'])
    .where('id', '=', jobId)
    .executeTakeFirst();
}

export async function cancelMockJob(database: Database, jobId: string, now: number): Promise<void> {
  await database.write
    .updateTable('mock_jobs')
    .set({ canceled_at: now })
    .where('id', '=', jobId)
    .where('canceled_at', 'is', null)
    .where('ends_at', '>', now)
    .execute();
}

/** Jobs ended long ago are forgotten, as real providers archive results after a retention time. */
export async function deleteMockJobsEndedBefore(database: Database, before: number): Promise<void> {
  await database.write.deleteFrom('mock_jobs').where('ends_at', '<', before).execute();
}
