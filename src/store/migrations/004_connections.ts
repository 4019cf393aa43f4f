/** Migration 004: delivery connections (an assumed role or static credentials) and projects' notification address. */
import { type Kysely, sql } from 'kysely';

const CONNECTION_STATUSES = sql.join(['active', 'failed'].map((s) => sql.lit(s)));

export async function up(db: Kysely<unknown>): Promise<void> {
  // Where a connection's incident mail goes (one mail when it is marked failed).
  await db.schema.alterTable('projects').addColumn('notification_email', 'text').execute();

  await db.schema
    .createTable('connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('role_arn', 'text')
    .addColumn('external_id', 'text', (c) => c.notNull())
    // JSON array of bucket ARNs; null when any bucket may be targeted.
    .addColumn('allowed_buckets', 'text')
    // S3-compatible stores: an endpoint and static credentials (sealed with BARGE_SECRET_KEY).
    .addColumn('endpoint_url', 'text')
    .addColumn('region', 'text')
    .addColumn('sealed_credentials', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${CONNECTION_STATUSES})`))
    .addColumn('last_failure_reason', 'text')
    .addColumn('last_failed_at', 'bigint')
    .addColumn('last_check_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // A connection reaches the bucket one way: by assuming a role, or with static credentials.
    .addCheckConstraint(
      'connections_one_way',
      sql`(role_arn is not null and sealed_credentials is null) or (role_arn is null and sealed_credentials is not null)`,
    )
    .execute();
  await db.schema.createIndex('connections_project').on('connections').column('project_id').execute();
}
