import { type Kysely, sql } from 'kysely';

/**
 * Batches over a real-time endpoint (decisions.md, "Batches over a real-time endpoint"):
 *
 * - `realtime_requests`: each request of an `openai-compatible` batch, sent one by one by the
 *   endpoint runner under a lease (`locked_by`, `locked_until`: the endpoint's timeout plus a
 *   margin) and settled with the endpoint's answer or error. A queued request with a live lease is
 *   in flight; the live leases of an endpoint are what its `max_concurrency` bounds.
 * - `realtime_endpoints`: one row per endpoint name, locked by every claim (FOR UPDATE on
 *   PostgreSQL; SQLite's write lock), so claims of one endpoint take turns and never together pass
 *   its max_concurrency.
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
  // An endpoint's requests in flight: only leased rows carry locked_until (a settle clears it).
  await db.schema
    .createIndex('realtime_requests_leased')
    .on('realtime_requests')
    .columns(['endpoint', 'locked_until'])
    .where(sql<boolean>`locked_until is not null`)
    .execute();
  await db.schema
    .createTable('realtime_endpoints')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .execute();
}
