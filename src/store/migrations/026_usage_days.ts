import { type Kysely, sql } from 'kysely';

/**
 * `usage_days`: a project's usage per UTC day and model, what GET /usage reports, added to by the
 * transaction that stores the results (store/results/store.ts), one row per project, day and
 * model. It replaces the `results_usage` index (project, time), which GET /usage summed results
 * from: every result was an entry in its project's part of that index, so a collector storing a
 * batch of many projects' results wrote a page per project, and a report read every result of
 * its range. Now the report reads a row per day and model, and a batch's results add to a few rows.
 *
 * Filled here from the results stored so far (those of rows older than migration 010 have no
 * project, and were never reported). A canceled cargo's result is not usage (it never ran).
 * `day` is days since 1970-01-01; the costs stay null until a result with a known price adds one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('usage_days')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('cargo', 'bigint', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cache_creation_input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cache_read_input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cost_usd', 'double precision')
    .addColumn('standard_cost_usd', 'double precision')
    .addPrimaryKeyConstraint('usage_days_pk', ['project_id', 'day', 'model'])
    .execute();
  await sql`insert into usage_days (project_id, day, model, cargo, requests, input_tokens, output_tokens,
      cache_creation_input_tokens, cache_read_input_tokens, cost_usd, standard_cost_usd)
    select r.project_id, r.created_at / 86400000, c.model, count(*), sum(c.request_count), sum(r.input_tokens),
      sum(r.output_tokens), sum(r.cache_creation_input_tokens), sum(r.cache_read_input_tokens), sum(r.cost_usd),
      sum(r.standard_cost_usd)
    from results r join cargo c on c.id = r.cargo_id
    where r.project_id is not null and c.status <> 'canceled'
    group by r.project_id, r.created_at / 86400000, c.model`.execute(db);
  await db.schema.dropIndex('results_usage').execute();
}
