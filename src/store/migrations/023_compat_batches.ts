import { type Kysely, sql } from 'kysely';

/**
 * The provider-compatible batch endpoints (decisions.md, "Provider-compatible batch endpoints"):
 *
 * - `compat_batches`: an Anthropic Message Batch (`msgbatch_…`) or an OpenAI batch (`batch_…`) of
 *   a project. `state`: `creating` while its requests are validated and staged (invisible; a
 *   lapsed lease, `locked_until`, lets the sweeper delete it), `open` once its cargo exist,
 *   `failed` (an OpenAI batch whose lines were refused: no cargo), `ended` once every request is
 *   terminal (its counts frozen, an OpenAI batch's output and error files made). The lease also
 *   guards the making of those files. `cancel_requested_at` and `cancel_done` let the sweeper
 *   finish a cancel a crash interrupted.
 * - `compat_batch_requests`: the requests of a batch in submission order, each one cargo.
 * - `compat_staged_cargo`: the cargo of a batch being created, copied into `cargo` and
 *   `cargo_requests` in one transaction when the whole batch is valid, then deleted.
 * - `compat_files` and `compat_file_chunks`: OpenAI files (uploads, output and error files) in
 *   chunks of a few MiB; `writing` while an upload or an output file is being written.
 * The state lists are frozen copies, never imports of live code.
 */
const API = ['anthropic', 'openai'];
const BATCH_STATES = ['creating', 'open', 'failed', 'ended'];
const FILE_STATES = ['writing', 'ready'];
const PURPOSES = ['batch', 'batch_output'];

const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('compat_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('api', 'text', (c) => c.notNull().check(sql`api in (${list(API)})`))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in (${list(BATCH_STATES)})`))
    .addColumn('request_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('cancel_requested_at', 'bigint')
    .addColumn('cancel_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('ended_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('errored', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('canceled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('input_file_id', 'text')
    .addColumn('metadata', 'text')
    .addColumn('errors', 'text')
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .execute();
  // Lists page a project's batches of one API newest first by id (ids are time-ordered ULIDs).
  await db.schema
    .createIndex('compat_batches_by_project')
    .on('compat_batches')
    .columns(['project_id', 'api', 'id'])
    .execute();
  // The sweeper's work: batches being created and cancels not done, few at any time.
  await db.schema
    .createIndex('compat_batches_unsettled')
    .on('compat_batches')
    .columns(['state', 'locked_until'])
    .where(sql<boolean>`state = 'creating' or (cancel_requested_at is not null and cancel_done = 0)`)
    .execute();
  await db.schema.createIndex('compat_batches_age').on('compat_batches').column('created_at').execute();

  await db.schema
    .createTable('compat_batch_requests')
    .addColumn('batch_id', 'text', (c) => c.notNull().references('compat_batches.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('custom_id', 'text', (c) => c.notNull())
    .addColumn('cargo_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('compat_batch_requests_pk', ['batch_id', 'position'])
    .execute();

  await db.schema
    .createTable('compat_staged_cargo')
    .addColumn('batch_id', 'text', (c) => c.notNull().references('compat_batches.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('cargo_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_model', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('request_bytes', 'integer', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('reserved_nusd', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('compat_staged_cargo_pk', ['batch_id', 'position'])
    .execute();

  await db.schema
    .createTable('compat_files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in (${list(PURPOSES)})`))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in (${list(FILE_STATES)})`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_until', 'bigint')
    .execute();
  await db.schema.createIndex('compat_files_by_project').on('compat_files').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('compat_files_expiry').on('compat_files').column('expires_at').execute();
  await db.schema
    .createIndex('compat_files_writing')
    .on('compat_files')
    .column('locked_until')
    .where(sql<boolean>`state = 'writing'`)
    .execute();

  await db.schema
    .createTable('compat_file_chunks')
    .addColumn('file_id', 'text', (c) => c.notNull().references('compat_files.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('compat_file_chunks_pk', ['file_id', 'seq'])
    .execute();
}
