import { type Kysely, sql } from 'kysely';

/**
 * Bulk recovery and the providers' view (issue 26, "Dashboard and admin API"):
 * - `recoveries`: one row per bulk redelivery of a project's cargo in a time window. Its set is
 *   fixed when it is made: cargo created in [since, until) that were in `cargo_status`
 *   (`updated_at <= created_at`) with a result; `total` counts it then. Workers go through it in
 *   id order under a lease (`locked_by`, `locked_until`, due at `next_run_at`), each chunk's
 *   redeliveries and the advance of `cursor`, `done` and `redelivered` in one transaction, so a
 *   chunk is redelivered once whoever holds the lease. `recoveries_due` serves the claim,
 *   `recoveries_project` the list, newest first.
 * - `batches_errors`: the newest error a provider's batches hold, without reading every batch.
 * The status lists are frozen copies, never imports of live code.
 */
const STATUSES = ['running', 'completed', 'canceled'];
const CARGO_STATUSES = ['callback_failed', 'callback_delivered'];

const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('recoveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${list(STATUSES)})`))
    .addColumn('cargo_status', 'text', (c) => c.notNull().check(sql`cargo_status in (${list(CARGO_STATUSES)})`))
    .addColumn('since', 'bigint', (c) => c.notNull())
    .addColumn('until', 'bigint', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('redelivered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cursor', 'text')
    .addColumn('next_run_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('recoveries_due')
    .on('recoveries')
    .column('next_run_at')
    .where(sql.ref('status'), '=', 'running')
    .execute();
  await db.schema.createIndex('recoveries_project').on('recoveries').columns(['project_id', 'id']).execute();

  await db.schema
    .createIndex('batches_errors')
    .on('batches')
    .columns(['provider', 'updated_at'])
    .where(sql.ref('last_error'), 'is not', null)
    .execute();
}
