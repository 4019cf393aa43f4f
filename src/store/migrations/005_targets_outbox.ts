import { type Kysely, sql } from 'kysely';

/**
 * Other cloud delivery targets (SQS, SNS, EventBridge), the incident-mail outbox, and the change
 * counter that tells API processes when cached API keys must be looked up again. The lists below
 * are frozen copies, never imports of live code: an upgraded database must end up exactly like a
 * fresh one.
 */
const CHANNELS = ['webhook', 'object_store', 'sqs', 'sns', 'eventbridge'];
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'];
const OUTBOX_STATUSES = ['pending', 'sent', 'failed'];

const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

/** The SQLite rebuild of `deliveries` drops a table that delivery_attempts references. */
export const foreignKeysOff = true;

export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  // A connection's allow-list now holds the ARNs of any target kind, not only buckets.
  await db.schema.alterTable('connections').renameColumn('allowed_buckets', 'allowed_targets').execute();

  // The channel CHECK constraint gains the new targets. PostgreSQL alters it in place; SQLite
  // cannot, so the table is rebuilt (its rows, ids and indexes unchanged).
  if (dialect === 'postgres') {
    await sql`alter table deliveries drop constraint deliveries_channel_check`.execute(db);
    await sql`alter table deliveries add constraint deliveries_channel_check check (channel in (${list(CHANNELS)}))`.execute(
      db,
    );
  } else {
    await db.schema
      .createTable('deliveries_next')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('cargo_id', 'text', (c) => c.notNull().references('cargo.id'))
      .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in (${list(CHANNELS)})`))
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${list(DELIVERY_STATUSES)})`))
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
    await sql`insert into deliveries_next select id, cargo_id, channel, status, attempts, next_attempt_at, locked_by,
      locked_until, last_error, last_status_code, trigger, created_at, updated_at, ended_at from deliveries`.execute(
      db,
    );
    await db.schema.dropTable('deliveries').execute();
    await db.schema.alterTable('deliveries_next').renameTo('deliveries').execute();
    await db.schema.createIndex('deliveries_cargo').on('deliveries').column('cargo_id').execute();
    await db.schema
      .createIndex('deliveries_due')
      .on('deliveries')
      .column('next_attempt_at')
      .where(sql.ref('status'), '=', 'pending')
      .execute();
  }

  // Mail that must go out at least once (a connection's incident mail), written in the same
  // transaction as the state change it reports, and sent from here with retries.
  await db.schema
    .createTable('outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${list(OUTBOX_STATUSES)})`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('outbox_due')
    .on('outbox')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();

  // Bumped in the same transaction as any change to a key or a project's standing; API processes
  // read it a few times a second and drop their key cache when it moved.
  await db.schema
    .createTable('change_counters')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('change_counters').values({ name: 'auth', value: 0 }).execute();
}
