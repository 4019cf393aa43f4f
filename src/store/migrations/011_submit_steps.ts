import { type Kysely, sql } from 'kysely';

/**
 * The provider seam keeps its state on the batch row (src/providers/provider.ts):
 * - `provider_state`: what an adapter handed back between steps (OpenAI's uploaded input file,
 *   svc-mock's end time), persisted so a crash between steps repeats no work it can avoid;
 * - `submit_started_at`: the submit intent, recorded before the first call that may create a job,
 *   so a worker that takes the batch over looks for a job the lost call created before making one;
 * - one batch per provider job: a job can never be recorded by two batches.
 * svc-mock's jobs become that state: a running job's end time moves onto its batch, and
 * `mock_jobs` is dropped (adapters never touch the store).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('batches').addColumn('provider_state', 'text').execute();
  await db.schema.alterTable('batches').addColumn('submit_started_at', 'bigint').execute();
  await sql`update batches set provider_state = (
      select '{"endsAt":' || j.ends_at || '}' from mock_jobs j where j.id = batches.job_id)
    where provider = 'mock' and job_id is not null`.execute(db);
  await db.schema.dropTable('mock_jobs').execute();
  await db.schema
    .createIndex('batches_job_once')
    .on('batches')
    .columns(['provider', 'job_id'])
    .unique()
    .where(sql.ref('job_id'), 'is not', null)
    .execute();
}
