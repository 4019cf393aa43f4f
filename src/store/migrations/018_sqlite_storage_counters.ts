import { type Kysely, sql } from 'kysely';

/**
 * SQLite: the storage triggers on `results` (migration 007) move the project's counter row itself
 * instead of appending a change row per result. The change rows exist so that the collectors and
 * purgers of several PostgreSQL workers never wait on a shared counter row (migration 014 keeps
 * them there); SQLite has one writer, so there is nothing to wait on, and each appended row cost
 * an index entry in `storage_changes_project` in its project's part of the index: with many
 * projects a chunk of results dirtied a page per project (bench:pipeline --projects 100 wrote
 * about 2 KiB more a cargo). The change rows not folded yet are folded here.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql.raw('drop trigger results_storage_stored').execute(db);
  await sql.raw('drop trigger results_storage_purged').execute(db);
  const bytes = (expr: string) => `coalesce(length(cast(${expr} as blob)), 0)`;
  // The row exists once the project accepted a cargo; the upsert keeps a change even if not.
  const move = (change: string) => `insert into project_storage (project_id, held_bytes, day, day_bytes)
      select c.project_id, ${change}, 0, 0 from cargo c where c.id = new.cargo_id
      on conflict (project_id) do update set held_bytes = project_storage.held_bytes + excluded.held_bytes;`;
  await sql
    .raw(`create trigger results_storage_stored after insert on results begin
      ${move(`${bytes('new.response')} + ${bytes('new.error_message')}`)}
    end`)
    .execute(db);
  await sql
    .raw(`create trigger results_storage_purged after update of purged_at on results
      when old.purged_at is null and new.purged_at is not null begin
      ${move(`-(${bytes('old.response')} + ${bytes('old.error_message')} + c.request_bytes)`)}
    end`)
    .execute(db);
  await sql
    .raw(`insert into project_storage (project_id, held_bytes, day, day_bytes)
      select project_id, sum(bytes), 0, 0 from storage_changes group by project_id
      on conflict (project_id) do update set held_bytes = project_storage.held_bytes + excluded.held_bytes`)
    .execute(db);
  await sql.raw('delete from storage_changes').execute(db);
}
