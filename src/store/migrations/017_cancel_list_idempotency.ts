import { type Kysely, sql } from 'kysely';

/**
 * Client operations (decisions.md, "Client operations"):
 * - the cargo status `canceled` joins the CHECK constraint (PostgreSQL alters it in place; SQLite
 *   cannot, so the table is rebuilt with its rows and indexes unchanged);
 * - GET /cargo reads a project's cargo newest first by keyset on the id (a time-ordered ULID):
 *   `cargo_by_project` (project, id) replaces `cargo_project` (project), and the two filters a
 *   list narrows by most get their own range, so a page costs its rows at any depth, whatever
 *   the filter matches: `cargo_by_project_status`, `cargo_by_project_model`;
 * - `idempotency_keys`: a project's Idempotency-Key, the SHA-256 of the body it came with and the
 *   cargo it made; the primary key makes one cargo of concurrent requests with one key, across
 *   API processes. Kept 24 hours (`idempotency_keys_age` serves the purge).
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

const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

/** The SQLite rebuild of `cargo` drops a table that cargo_requests, results and deliveries reference. */
export const foreignKeysOff = true;

/** The statuses GET /cargo finds through their own partial index (store/cargo/list.ts says them too). */
const RARE_LISTED_STATUSES = ['failed', 'callback_failed', 'canceled'] as const;

export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect === 'postgres') {
    await sql`alter table cargo drop constraint cargo_status_check`.execute(db);
    await sql`alter table cargo add constraint cargo_status_check check (status in (${list(STATUSES)}))`.execute(db);
  } else {
    await db.schema
      .createTable('cargo_next')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${list(STATUSES)})`))
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
      .execute();
    await sql`insert into cargo_next select id, project_id, status, model, provider, provider_model, request_count,
      is_records, request_bytes, result_ttl_seconds, callback_url, callback, created_at, updated_at, batch_id
      from cargo`.execute(db);
    await db.schema.dropTable('cargo').execute();
    // The storage triggers on results name `cargo` in their bodies: between the drop and the rename
    // there is none, which the modern rename refuses; the legacy rename leaves triggers alone.
    await sql`pragma legacy_alter_table = on`.execute(db);
    await db.schema.alterTable('cargo_next').renameTo('cargo').execute();
    await sql`pragma legacy_alter_table = off`.execute(db);
    await db.schema
      .createIndex('cargo_pending')
      .on('cargo')
      .columns(['provider', 'provider_model', 'created_at'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
    await db.schema
      .createIndex('cargo_pending_by_project')
      .on('cargo')
      .columns(['provider', 'provider_model', 'project_id', 'created_at', 'id'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
    await db.schema.createIndex('cargo_batch_order').on('cargo').columns(['batch_id', 'id']).execute();
  }
  if (dialect === 'postgres') await db.schema.dropIndex('cargo_project').execute();
  // GET /cargo pages by (project, id); a model filter is checked inside this index. Statuses that
  // can be rare deep in a project's history have a partial index of their own, written once a
  // cargo ends there: a full (project, status) index is rewritten at every status move, on the
  // pipeline's hot path (about 1 KiB written a cargo).
  await db.schema.createIndex('cargo_by_project').on('cargo').columns(['project_id', 'id', 'model']).execute();
  await db.schema
    .createIndex('cargo_by_project_rare_status')
    .on('cargo')
    .columns(['project_id', 'status', 'id'])
    .where(sql<boolean>`status in (${list([...RARE_LISTED_STATUSES])})`)
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('body_sha256', 'text', (c) => c.notNull())
    .addColumn('cargo_id', 'text', (c) => c.notNull().references('cargo.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['project_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_age').on('idempotency_keys').column('created_at').execute();
}
