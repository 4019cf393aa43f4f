/** Migration 002: batches, the cargo's batch and the pipeline's indexes, staged record results, and svc-mock's jobs. */
import { type Kysely, sql } from 'kysely';

const BATCH_STATUSES = sql.join(['submitting', 'processing', 'ended'].map((s) => sql.lit(s)));

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_model', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${BATCH_STATUSES})`))
    .addColumn('job_id', 'text')
    .addColumn('cargo_count', 'integer', (c) => c.notNull())
    .addColumn('request_count', 'integer', (c) => c.notNull())
    .addColumn('padding_count', 'integer', (c) => c.notNull())
    .addColumn('request_bytes', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('submitted_at', 'bigint')
    .addColumn('deadline_at', 'bigint')
    .addColumn('next_check_at', 'bigint', (c) => c.notNull())
    .addColumn('poll_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('canceled_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('end_reason', 'text')
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The submitter and the poller look for due, unleased batches that have not ended.
  await db.schema
    .createIndex('batches_due')
    .on('batches')
    .columns(['status', 'next_check_at'])
    .where(sql.ref('status'), '<>', 'ended')
    .execute();

  await db.schema.alterTable('cargo').addColumn('batch_id', 'text').execute();
  await db.schema.createIndex('cargo_batch').on('cargo').column('batch_id').execute();
  // The batcher's groups: pending cargo of one (provider, model), oldest first.
  await db.schema
    .createIndex('cargo_pending')
    .on('cargo')
    .columns(['provider', 'provider_model', 'created_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();

  await db.schema
    .createIndex('results_expiry')
    .on('results')
    .column('expires_at')
    .where(sql.ref('purged_at'), 'is', null)
    .execute();

  // Per-record results of `records` cargo, staged until every record of the cargo has one.
  await db.schema
    .createTable('record_results')
    .addColumn('cargo_id', 'text', (c) => c.notNull())
    .addColumn('record_index', 'integer', (c) => c.notNull())
    .addColumn('success', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('record_results_pk', ['cargo_id', 'record_index'])
    .execute();

  // svc-mock's own jobs: durable, so a restart in the middle of a mock job still completes it.
  await db.schema
    .createTable('mock_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('batch_id', 'text', (c) => c.notNull().unique())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('request_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addColumn('canceled_at', 'bigint')
    .execute();
  await db.schema.createIndex('mock_jobs_ends').on('mock_jobs').column('ends_at').execute();
}
