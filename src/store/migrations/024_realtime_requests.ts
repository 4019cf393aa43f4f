import { type Kysely, sql } from 'kysely';

/**
 * Batches over a real-time endpoint (decisions.md, "Batches over a real-time endpoint"):
 *
 * - `realtime_requests`: each request of an `openai-compatible` batch, leased by an endpoint runner
 *   (`locked_by`, `locked_until`) before it is sent, and settled with the endpoint's answer or
 *   error under that lease.
 * - `realtime_slots`: `max_concurrency` rows per endpoint; a worker sends a request only in a slot
 *   it holds under a lease (claimed FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite's write lock is
 *   the database's), so every worker together never has more requests in flight than the slots.
 * The state list is a frozen copy, never an import of live code.
 */
const STATES = ['queued', 'answered', 'failed', 'expired', 'canceled'];

const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('realtime_requests')
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('custom_id', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in (${list(STATES)})`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('deadline_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('response', 'text')
    .addColumn('error', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('realtime_requests_pk', ['batch_id', 'custom_id'])
    .execute();
  // The runner's claim: an endpoint's queued requests by due time.
  await db.schema
    .createIndex('realtime_requests_due')
    .on('realtime_requests')
    .columns(['endpoint', 'next_attempt_at'])
    .where(sql<boolean>`state = 'queued'`)
    .execute();
  // A worker's leased requests: only leased rows carry locked_by (a settle clears it).
  await db.schema
    .createIndex('realtime_requests_leased')
    .on('realtime_requests')
    .columns(['endpoint', 'locked_by'])
    .where(sql<boolean>`locked_by is not null`)
    .execute();
  await db.schema
    .createTable('realtime_slots')
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addPrimaryKeyConstraint('realtime_slots_pk', ['endpoint', 'slot'])
    .execute();
}
