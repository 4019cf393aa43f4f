import { type Kysely, sql } from 'kysely';

/**
 * A storage budget per project (src/store/storage-usage.ts): what each project holds and has been
 * accepted today, kept as counters so the submit path never sums a table.
 *
 * - `projects.daily_byte_budget` / `held_byte_budget`: the project's own limits; null uses the
 *   configured default.
 * - `project_storage`: one row per project. `held_bytes` moves with the cargo insert (in the
 *   group-commit transaction, explicitly), `day`/`day_bytes` count what was accepted on the UTC day
 *   starting at `day`.
 * - `storage_changes`: what results add when stored and release when purged, written by triggers
 *   on `results` in the transaction that stores or purges them. Append-only, so the collectors and
 *   the purger of several workers never wait on (or deadlock over) a shared counter row; each
 *   group commit folds the rows of its projects into `held_bytes`, and a reader adds what is not
 *   folded yet.
 *
 * Held bytes are: every cargo's metadata, the request of every cargo whose result is not purged,
 * and every result not purged (response and error text). Existing databases start from a count.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema.alterTable('projects').addColumn('daily_byte_budget', 'bigint').execute();
  await db.schema.alterTable('projects').addColumn('held_byte_budget', 'bigint').execute();
  await db.schema
    .createTable('project_storage')
    .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id'))
    .addColumn('held_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('day_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('storage_changes')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('storage_changes_project').on('storage_changes').column('project_id').execute();

  // Byte length of text: octet_length in PostgreSQL; SQLite's length() counts characters.
  const bytes = (expr: string) =>
    dialect === 'postgres' ? `coalesce(octet_length(${expr}), 0)` : `coalesce(length(cast(${expr} as blob)), 0)`;
  const stored = `${bytes('new.response')} + ${bytes('new.error_message')}`;
  const released = `${bytes('old.response')} + ${bytes('old.error_message')}`;
  if (dialect === 'postgres') {
    await sql
      .raw(`create function barge_result_stored() returns trigger language plpgsql as $$
        begin
          insert into storage_changes (project_id, bytes)
            select c.project_id, ${stored} from cargo c where c.id = new.cargo_id;
          return null;
        end $$`)
      .execute(db);
    await sql
      .raw(`create function barge_result_purged() returns trigger language plpgsql as $$
        begin
          insert into storage_changes (project_id, bytes)
            select c.project_id, -(${released} + c.request_bytes) from cargo c where c.id = new.cargo_id;
          return null;
        end $$`)
      .execute(db);
    await sql
      .raw(`create trigger results_storage_stored after insert on results
        for each row execute function barge_result_stored()`)
      .execute(db);
    await sql
      .raw(`create trigger results_storage_purged after update of purged_at on results
        for each row when (old.purged_at is null and new.purged_at is not null)
        execute function barge_result_purged()`)
      .execute(db);
  } else {
    await sql
      .raw(`create trigger results_storage_stored after insert on results begin
        insert into storage_changes (project_id, bytes)
          select c.project_id, ${stored} from cargo c where c.id = new.cargo_id;
      end`)
      .execute(db);
    await sql
      .raw(`create trigger results_storage_purged after update of purged_at on results
        when old.purged_at is null and new.purged_at is not null begin
        insert into storage_changes (project_id, bytes)
          select c.project_id, -(${released} + c.request_bytes) from cargo c where c.id = new.cargo_id;
      end`)
      .execute(db);
  }

  // The count to start from: one pass over the tables, once.
  const now = Date.now();
  const today = now - (now % 86_400_000);
  const metadata = dialect === 'postgres' ? 'coalesce(octet_length(c.metadata), 0)' : 'coalesce(length(c.metadata), 0)';
  const response = bytes('r.response');
  const error = bytes('r.error_message');
  await sql
    .raw(`insert into project_storage (project_id, held_bytes, day, day_bytes)
      select p.id,
        coalesce((select sum(${metadata}
            + case when r.purged_at is null then c.request_bytes + ${response} + ${error} else 0 end)
          from cargo c left join results r on r.cargo_id = c.id where c.project_id = p.id), 0),
        ${today},
        coalesce((select sum(c.request_bytes + ${metadata}) from cargo c
          where c.project_id = p.id and c.created_at >= ${today}), 0)
      from projects p`)
    .execute(db);
}
