/** Migration 016: prompt-cache tokens on every result and staged record. */
import type { Kysely } from 'kysely';

/**
 * Cache usage per result (decisions.md, "The full request surface"; src/domain/usage.ts):
 * `cache_creation_input_tokens` (writes to the prompt cache), `cache_creation_1h_input_tokens`
 * (of those, the 1-hour writes, priced apart) and `cache_read_input_tokens`, on `results` (summed
 * over a `records` cargo's records) and on `record_results` (summed when the cargo's result is
 * assembled). Columns are only added: existing rows keep every value and count 0 cache tokens
 * (what they cached was not recorded); their costs stay as they were fixed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const columns = ['cache_creation_input_tokens', 'cache_creation_1h_input_tokens', 'cache_read_input_tokens'];
  // As migration 010's token columns: a records cargo sums up to 10,000 requests.
  for (const [table, type] of [
    ['results', 'bigint'],
    ['record_results', 'integer'],
  ] as const) {
    for (const column of columns) {
      await db.schema
        .alterTable(table)
        .addColumn(column, type, (c) => c.notNull().defaultTo(0))
        .execute();
    }
  }
}
