import { type Kysely, sql } from 'kysely';

/**
 * Provider-compatible batches, kept cheap to read (migration 023):
 * - `compat_cargo`: each cargo of such a batch, its batch and its metadata (`{batch_id,
 *   custom_id}`). The metadata lived in `cargo_requests` after the request text; on SQLite,
 *   reading it walked the request's overflow pages, so GET /cargo over such cargo read every
 *   request. Readers take `compat_cargo.metadata` first; a compat cargo's `cargo_requests.metadata`
 *   is null.
 * - `compat_batches.succeeded/errored/canceled/expired` count live (they were frozen at the end
 *   only) and `last_result_at` says when the latest result came: a trigger on `results` moves
 *   them in the transaction that stores a result, so reading a batch no longer counts its cargo.
 *   The outcome is the SQL twin of compat/request-outcome.ts (`canceled`, `canceled: …`,
 *   `expired: …`). PostgreSQL runs the trigger once a statement and locks the batches in id
 *   order, so two collectors never deadlock on them.
 * - `compat_batches.publish_started_at`: a batch's cargo are created in bounded transactions
 *   (the one transaction held SQLite's writer about 10 s per 256 MB); once the publish began the
 *   batch is committed to, and the sweeper finishes a publish whose process died.
 * - `compat_batches.deleted_at`: a batch being deleted is hidden at once and its request list
 *   (up to 100,000 rows) deleted in chunks, never in one long transaction; a crash in between
 *   leaves it to the sweeper.
 */
const OUTCOME = (row: string) => `case
    when ${row}.success = 1 then 'succeeded'
    when ${row}.error_message = 'canceled' or ${row}.error_message like 'canceled:%' then 'canceled'
    when ${row}.error_message like 'expired:%' then 'expired'
    else 'errored' end`;
const KINDS = ['succeeded', 'errored', 'canceled', 'expired'] as const;

export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('compat_cargo')
    .addColumn('cargo_id', 'text', (c) => c.primaryKey().references('cargo.id'))
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('compat_batches').addColumn('last_result_at', 'bigint').execute();
  await db.schema.alterTable('compat_batches').addColumn('deleted_at', 'bigint').execute();
  await db.schema.alterTable('compat_batches').addColumn('publish_started_at', 'bigint').execute();
  // A publish chunk is cut by the sizes of its requests, read from here rather than from the rows.
  await db.schema
    .createIndex('compat_staged_cargo_sizes')
    .on('compat_staged_cargo')
    .columns(['batch_id', 'position', 'request_bytes'])
    .execute();
  await db.schema
    .createIndex('compat_batches_deleted')
    .on('compat_batches')
    .column('deleted_at')
    .where(sql<boolean>`deleted_at is not null`)
    .execute();

  // What 023 kept: the metadata moves, and the open batches' counts are counted once here.
  await sql`insert into compat_cargo (cargo_id, batch_id, metadata)
    select q.cargo_id, q.batch_id, r.metadata from compat_batch_requests q
    join cargo_requests r on r.cargo_id = q.cargo_id where r.metadata is not null`.execute(db);
  await sql`update cargo_requests set metadata = null
    where cargo_id in (select cargo_id from compat_cargo)`.execute(db);
  const counted = KINDS.map(
    (kind) => `${kind} = (select count(*) from compat_batch_requests q join results r on r.cargo_id = q.cargo_id
      where q.batch_id = compat_batches.id and ${OUTCOME('r')} = '${kind}')`,
  );
  await sql
    .raw(`update compat_batches set ${counted.join(', ')},
      last_result_at = (select max(r.created_at) from compat_batch_requests q join results r on r.cargo_id = q.cargo_id
        where q.batch_id = compat_batches.id)
      where state = 'open'`)
    .execute(db);

  if (dialect === 'sqlite') {
    const moves = KINDS.map(
      (kind) => `${kind} = ${kind} + (case when ${OUTCOME('new')} = '${kind}' then 1 else 0 end)`,
    );
    await sql
      .raw(`create trigger results_compat_counts after insert on results begin
        update compat_batches set ${moves.join(', ')},
          last_result_at = max(coalesce(last_result_at, 0), new.created_at)
        where id = (select batch_id from compat_cargo where cargo_id = new.cargo_id);
      end`)
      .execute(db);
    return;
  }
  const sums = KINDS.map((kind) => `sum(case when ${OUTCOME('n')} = '${kind}' then 1 else 0 end) as ${kind}`);
  const moves = KINDS.map((kind) => `${kind} = b.${kind} + t.${kind}`);
  await sql
    .raw(`create function barge_compat_counts() returns trigger language plpgsql as $$
      begin
        perform 1 from compat_batches where id in (
          select l.batch_id from stored n join compat_cargo l on l.cargo_id = n.cargo_id) order by id for update;
        update compat_batches b set ${moves.join(', ')},
          last_result_at = greatest(coalesce(b.last_result_at, 0), t.last_at)
        from (select l.batch_id, ${sums.join(', ')}, max(n.created_at) as last_at
          from stored n join compat_cargo l on l.cargo_id = n.cargo_id group by l.batch_id) t
        where b.id = t.batch_id;
        return null;
      end $$`)
    .execute(db);
  await sql
    .raw(`create trigger results_compat_counts after insert on results
      referencing new table as stored for each statement execute function barge_compat_counts()`)
    .execute(db);
}
