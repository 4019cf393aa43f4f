import { type Kysely, sql } from 'kysely';

/**
 * Narrow cargo rows: a status change should rewrite tens of bytes, not the request. The request
 * text and the metadata, written once, move to `cargo_requests`; the cargo row keeps what changes
 * and what routing and delivery read. svc-mock's jobs stop keeping a copy of their requests (the
 * provider replays them from the batch), so a status poll no longer reads past megabytes of input.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('cargo_requests')
    .addColumn('cargo_id', 'text', (c) => c.primaryKey().references('cargo.id'))
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .execute();
  await sql`insert into cargo_requests (cargo_id, request, metadata) select id, request, metadata from cargo`.execute(
    db,
  );
  await db.schema.alterTable('cargo').dropColumn('request').execute();
  await db.schema.alterTable('cargo').dropColumn('metadata').execute();
  await db.schema.alterTable('mock_jobs').dropColumn('input').execute();
}
