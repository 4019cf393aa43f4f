/** Migration 003: webhook signing secrets on projects, deliveries, and the append-only delivery attempts. */
import { type Kysely, sql } from 'kysely';
import { generateWebhookSecret } from '../../domain/webhook-secret.js';

const DELIVERY_STATUSES = sql.join(['pending', 'delivered', 'failed'].map((s) => sql.lit(s)));
const CHANNELS = sql.join(['webhook', 'object_store'].map((s) => sql.lit(s)));

export async function up(db: Kysely<any>): Promise<void> {
  // Webhook signing secrets (Standard Webhooks). The previous secret keeps signing for a while
  // after a rotation, so receivers can switch without losing deliveries.
  await db.schema.alterTable('projects').addColumn('webhook_secret', 'text').execute();
  await db.schema.alterTable('projects').addColumn('previous_webhook_secret', 'text').execute();
  await db.schema.alterTable('projects').addColumn('previous_webhook_secret_until', 'bigint').execute();
  const projects = await db.selectFrom('projects').select('id').execute();
  for (const { id } of projects) {
    await db.updateTable('projects').set({ webhook_secret: generateWebhookSecret() }).where('id', '=', id).execute();
  }

  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('cargo_id', 'text', (c) => c.notNull().references('cargo.id'))
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in (${CHANNELS})`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${DELIVERY_STATUSES})`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('deliveries_cargo').on('deliveries').column('cargo_id').execute();
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();

  // Append-only: one row per attempt, never updated.
  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error_class', 'text')
    .addColumn('error_detail', 'text')
    .addColumn('response_excerpt', 'text')
    .execute();
  await db.schema.createIndex('delivery_attempts_delivery').on('delivery_attempts').column('delivery_id').execute();
}
