/** Migration 010: tokens and cost on every result, tokens on staged records, padding tokens on batches. */
import { type Kysely, sql } from 'kysely';

/**
 * Usage and cost per result (decisions.md, "Usage and cost"; src/domain/usage.ts).
 *
 * - `results.input_tokens` / `output_tokens`: what the result used (summed over the records of a
 *   `records` cargo); `cost_usd` at the batch prices and `standard_cost_usd` at the real-time
 *   prices, null when no price was known.
 * - `results.project_id`: the cargo's project, copied so GET /usage reads one index range
 *   (`results_usage`: project, then time) instead of every cargo the project ever had; the cargo
 *   row is still joined for the model and the request count, one primary-key probe per result.
 * - `record_results.input_tokens` / `output_tokens`: a staged record's tokens, summed when its
 *   cargo's result is assembled.
 * - `batches.padding_input_tokens` / `padding_output_tokens`: what the padding requests of a batch
 *   used (fillers up to a provider's minimum): the operator's cost, never on a project.
 *
 * Existing rows get 0 tokens and null costs (what they cost was not recorded).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const tokens = async (table: string, type: 'integer' | 'bigint', prefix = '') => {
    for (const column of [`${prefix}input_tokens`, `${prefix}output_tokens`]) {
      await db.schema
        .alterTable(table)
        .addColumn(column, type, (c) => c.notNull().defaultTo(0))
        .execute();
    }
  };
  // A records cargo sums up to 10,000 requests: more than a 32-bit integer may hold.
  await tokens('results', 'bigint');
  await db.schema.alterTable('results').addColumn('cost_usd', 'double precision').execute();
  await db.schema.alterTable('results').addColumn('standard_cost_usd', 'double precision').execute();
  await db.schema.alterTable('results').addColumn('project_id', 'text').execute();
  await sql`update results set project_id = (select c.project_id from cargo c where c.id = results.cargo_id)`.execute(
    db,
  );
  await db.schema.createIndex('results_usage').on('results').columns(['project_id', 'created_at']).execute();
  await tokens('record_results', 'integer');
  await tokens('batches', 'bigint', 'padding_');
}
