import type { Kysely } from 'kysely';
import type { MockJobsTable, Schema } from './schema.js';

/** svc-mock's job storage. Inserting the same batch id twice keeps the first job (idempotent submit). */
export async function insertMockJob(db: Kysely<Schema>, job: MockJobsTable): Promise<string> {
  await db
    .insertInto('mock_jobs')
    .values(job)
    .onConflict((oc) => oc.column('batch_id').doNothing())
    .execute();
  const row = await db
    .selectFrom('mock_jobs')
    .select('id')
    .where('batch_id', '=', job.batch_id)
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function findMockJob(db: Kysely<Schema>, jobId: string): Promise<MockJobsTable | undefined> {
  return db.selectFrom('mock_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}

export async function findMockJobState(
  db: Kysely<Schema>,
  jobId: string,
): Promise<Pick<MockJobsTable, 'ends_at' | 'canceled_at'> | undefined> {
  return db.selectFrom('mock_jobs').select(['ends_at', 'canceled_at']).where('id', '=', jobId).executeTakeFirst();
}

export async function cancelMockJob(db: Kysely<Schema>, jobId: string, now: number): Promise<void> {
  await db
    .updateTable('mock_jobs')
    .set({ canceled_at: now })
    .where('id', '=', jobId)
    .where('canceled_at', 'is', null)
    .where('ends_at', '>', now)
    .execute();
}

/** Jobs ended long ago are forgotten, as real providers archive results after a retention time. */
export async function deleteMockJobsEndedBefore(db: Kysely<Schema>, before: number): Promise<void> {
  await db.deleteFrom('mock_jobs').where('ends_at', '<', before).execute();
}
