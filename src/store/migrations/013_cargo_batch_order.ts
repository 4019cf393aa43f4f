import type { Kysely } from 'kysely';

/**
 * A batch's cargo in id order from an index: `cargo(batch_id, id)` in place of `cargo(batch_id)`.
 * A batch's requests are read a page at a time in id order (store/batches/requests.ts); with only
 * `batch_id` indexed, every page found, joined and sorted the whole batch, so reading a
 * 100,000-request batch cost the batch's size for each of its 200 pages (bench/RESULTS.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('cargo_batch_order').on('cargo').columns(['batch_id', 'id']).execute();
  await db.schema.dropIndex('cargo_batch').execute();
}
