import { type Kysely, sql } from 'kysely';

/**
 * Cheaper cargo writes, the same rows and answers:
 * - One index of pending cargo, not two: the batcher finds each group's oldest cargo from
 *   `cargo_pending_by_project` (provider, model, project, time), its waiting projects' oldest by a
 *   loose scan (store/batches/pending-groups.ts), which fair forming reads anyway. `cargo_pending`
 *   (provider, model, time) served only that, and every cargo paid for it twice: an entry written
 *   when it arrived, and deleted when it was batched.
 * - SQLite: the status CHECK and the predicate of `cargo_by_project_rare_status` are written as
 *   `status = … or …`, not `status in (…)`. SQLite evaluates both on every insert and status move,
 *   and an IN list of more than two values costs a search of a temporary index each time: about
 *   1.5 µs a row for each of the two, the price of the equality tests many times over. SQLite cannot
 *   change a CHECK in place, so the table is rebuilt with its rows and indexes (as migration 017
 *   did). PostgreSQL tests an IN list as an array, and keeps both as they are.
 * The status list is a frozen copy, never an import of live code.
 */
const STATUSES = [
  'pending',
  'batched',
  'processing',
  'completed',
  'failed',
  'callback_pending',
  'callback_delivered',
  'callback_failed',
  'canceled',
];
const RARE_LISTED_STATUSES = ['failed', 'callback_failed', 'canceled'];

const statusIsOneOf = (values: string[]) =>
  sql<boolean>`${sql.join(
    values.map((v) => sql`status = ${sql.lit(v)}`),
    sql` or `,
  )}`;

/** The SQLite rebuild of `cargo` drops a table that cargo_requests, results and deliveries reference. */
export const foreignKeysOff = true;

export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema.dropIndex('cargo_pending').execute();
  if (dialect !== 'sqlite') return;
  await db.schema
    .createTable('cargo_next')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(statusIsOneOf(STATUSES)))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_model', 'text', (c) => c.notNull())
    .addColumn('request_count', 'integer', (c) => c.notNull())
    .addColumn('is_records', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('request_bytes', 'integer', (c) => c.notNull())
    .addColumn('result_ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('callback_url', 'text')
    .addColumn('callback', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('batch_id', 'text')
    .addColumn('reserved_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into cargo_next select id, project_id, status, model, provider, provider_model, request_count,
    is_records, request_bytes, result_ttl_seconds, callback_url, callback, created_at, updated_at, batch_id,
    reserved_nusd from cargo`.execute(db);
  await db.schema.dropTable('cargo').execute();
  // The triggers on results name `cargo` in their bodies: the legacy rename leaves them alone.
  await sql`pragma legacy_alter_table = on`.execute(db);
  await db.schema.alterTable('cargo_next').renameTo('cargo').execute();
  await sql`pragma legacy_alter_table = off`.execute(db);
  await db.schema
    .createIndex('cargo_pending_by_project')
    .on('cargo')
    .columns(['provider', 'provider_model', 'project_id', 'created_at', 'id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema.createIndex('cargo_batch_order').on('cargo').columns(['batch_id', 'id']).execute();
  await db.schema.createIndex('cargo_by_project').on('cargo').columns(['project_id', 'id', 'model']).execute();
  await db.schema
    .createIndex('cargo_by_project_rare_status')
    .on('cargo')
    .columns(['project_id', 'status', 'id'])
    .where(statusIsOneOf(RARE_LISTED_STATUSES))
    .execute();
}
