import { type Kysely, sql } from 'kysely';

/**
 * PostgreSQL: the storage counters' triggers on `results` (migration 007) run once a statement,
 * not once a row. A collector stores hundreds of results a statement; a row trigger ran its
 * PL/pgSQL body and an insert for each, a third of the cost of inserting a result (bench:pipeline
 * --db). The statement triggers read the statement's rows (transition tables) and add one change
 * row per project with their sum. SQLite has no statement triggers; its row triggers stay.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql.raw('drop trigger results_storage_stored on results').execute(db);
  await sql.raw('drop trigger results_storage_purged on results').execute(db);
  await sql.raw('drop function barge_result_stored()').execute(db);
  await sql.raw('drop function barge_result_purged()').execute(db);
  const bytes = (expr: string) => `coalesce(octet_length(${expr}), 0)`;
  await sql
    .raw(`create function barge_results_stored() returns trigger language plpgsql as $$
      begin
        insert into storage_changes (project_id, bytes)
          select c.project_id, sum(${bytes('n.response')} + ${bytes('n.error_message')})
          from stored n join cargo c on c.id = n.cargo_id group by c.project_id;
        return null;
      end $$`)
    .execute(db);
  await sql
    .raw(`create function barge_results_purged() returns trigger language plpgsql as $$
      begin
        insert into storage_changes (project_id, bytes)
          select c.project_id, -sum(${bytes('o.response')} + ${bytes('o.error_message')} + c.request_bytes)
          from before_update o join after_update n on n.cargo_id = o.cargo_id join cargo c on c.id = n.cargo_id
          where o.purged_at is null and n.purged_at is not null group by c.project_id;
        return null;
      end $$`)
    .execute(db);
  // Transition tables are not allowed with a column list (`update of purged_at`): the body keeps
  // only the rows whose purged_at was set.
  await sql
    .raw(`create trigger results_storage_stored after insert on results
      referencing new table as stored for each statement execute function barge_results_stored()`)
    .execute(db);
  await sql
    .raw(`create trigger results_storage_purged after update on results
      referencing old table as before_update new table as after_update
      for each statement execute function barge_results_purged()`)
    .execute(db);
}
