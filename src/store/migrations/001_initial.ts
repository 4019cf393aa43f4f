/** Migration 001: projects, API keys, cargo, results and rate-limit windows. */
import { type Kysely, sql } from 'kysely';

// A frozen copy of the cargo statuses as of this migration (never an import of live code: a status
// added later must come with its own migration, or fresh and upgraded databases would differ).
const statusList = sql.join(
  [
    'pending',
    'batched',
    'processing',
    'completed',
    'failed',
    'callback_pending',
    'callback_delivered',
    'callback_failed',
  ].map((s) => sql.lit(s)),
);

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1).check(sql`is_active in (0, 1)`))
    .addColumn('rate_limit_max', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1).check(sql`is_active in (0, 1)`))
    .addColumn('expires_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_project').on('api_keys').column('project_id').execute();

  await db.schema
    .createTable('cargo')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${statusList})`))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_model', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('request_count', 'integer', (c) => c.notNull())
    .addColumn('is_records', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('request_bytes', 'integer', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('result_ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('callback_url', 'text')
    .addColumn('callback', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cargo_project').on('cargo').column('project_id').execute();

  await db.schema
    .createTable('results')
    .addColumn('cargo_id', 'text', (c) => c.primaryKey().references('cargo.id'))
    .addColumn('success', 'integer', (c) => c.notNull().check(sql`success in (0, 1)`))
    .addColumn('response', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('purged_at', 'bigint')
    .execute();

  await db.schema
    .createTable('rate_limit_windows')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('hits', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('rate_limit_windows_pk', ['key', 'window_start'])
    .execute();
}
