import type { Kysely } from 'kysely';

/**
 * `batches.refusals`: how many times a provider refused the batch (rejected, or the credentials
 * refused). A batch fails on its third refusal; `attempts` counts every failed try, waits for a
 * rate limit or a quota included, so it cannot say that.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('batches')
    .addColumn('refusals', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
