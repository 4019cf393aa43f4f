import { type Kysely, sql } from 'kysely';

/**
 * Model policy and spend budgets per project (decisions.md, "Model policy and spend budgets"):
 *
 * - `projects.allowed_models`: the project's model allowlist, JSON array of globs; null: all.
 * - `projects.budget_mode` (`default`: BARGE_DEFAULT_MONTHLY_BUDGET_USD; `none`; `own`) with
 *   `monthly_budget_usd` / `daily_budget_usd` (own budgets).
 * - `cargo.reserved_nusd`: the estimate reserved for a cargo at submit, in nano-USD (1e-9 USD,
 *   integers: sums are exact, so a budget is reached exactly).
 * - `project_spend` (one row per project: what its unfinished cargo reserve) and
 *   `project_spend_days` (what its results cost, per UTC day): counters moved by the cargo insert
 *   (the group commit's transaction), as `project_storage` is.
 * - `spend_changes`: what a stored result costs and the reservation it releases, appended by a
 *   trigger on `results` (every end of a cargo stores one: completed, failed, canceled,
 *   expired), folded into the counters by the next group commit of the project; a reader adds
 *   what is not folded yet. Append-only, for the reason given in migration 007; on PostgreSQL
 *   only: SQLite's trigger moves the counters itself.
 * - `budget_alerts`: the alerts sent, one row per project, period and threshold: the primary key
 *   makes each one once, across processes.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema.alterTable('projects').addColumn('allowed_models', 'text').execute();
  await db.schema
    .alterTable('projects')
    .addColumn('budget_mode', 'text', (c) => c.notNull().defaultTo('default'))
    .execute();
  await db.schema.alterTable('projects').addColumn('monthly_budget_usd', 'double precision').execute();
  await db.schema.alterTable('projects').addColumn('daily_budget_usd', 'double precision').execute();
  await db.schema
    .alterTable('cargo')
    .addColumn('reserved_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('project_spend')
    .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id'))
    .addColumn('reserved_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('project_spend_days')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('spent_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('project_spend_days_pk', ['project_id', 'day'])
    .execute();
  await db.schema
    .createTable('spend_changes')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('spent_nusd', 'bigint', (c) => c.notNull())
    .addColumn('reserved_nusd', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('spend_changes_project').on('spend_changes').column('project_id').execute();
  await db.schema
    .createTable('budget_alerts')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('starts', 'bigint', (c) => c.notNull())
    .addColumn('threshold', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('budget_alerts_pk', ['project_id', 'period', 'starts', 'threshold'])
    .execute();

  // A result's cost in nano-USD, and the UTC day it is stored on.
  const spent = (r: string) => `cast(round(coalesce(${r}.cost_usd, 0) * 1e9) as bigint)`;
  const day = (r: string) => `(${r}.created_at - ${r}.created_at % 86400000)`;
  if (dialect === 'postgres') {
    // A statement trigger, as in migration 014: collectors store hundreds of results a statement.
    await sql
      .raw(`create function barge_results_spend() returns trigger language plpgsql as $$
        begin
          insert into spend_changes (project_id, day, spent_nusd, reserved_nusd)
            select c.project_id, ${day('n')}, sum(${spent('n')}), -sum(c.reserved_nusd)
            from spend_stored n join cargo c on c.id = n.cargo_id
            where c.reserved_nusd <> 0 or coalesce(n.cost_usd, 0) <> 0
            group by c.project_id, ${day('n')};
          return null;
        end $$`)
      .execute(db);
    await sql
      .raw(`create trigger results_spend after insert on results
        referencing new table as spend_stored for each statement execute function barge_results_spend()`)
      .execute(db);
  } else {
    // SQLite has one writer: the trigger moves the counters itself (as migration 018 does for
    // storage), instead of a change row per result in its project's part of an index.
    await sql
      .raw(`create trigger results_spend after insert on results begin
        update project_spend set reserved_nusd = reserved_nusd
            - (select c.reserved_nusd from cargo c where c.id = new.cargo_id)
          where project_id = (select c.project_id from cargo c where c.id = new.cargo_id and c.reserved_nusd <> 0);
        insert into project_spend_days (project_id, day, spent_nusd)
          select c.project_id, ${day('new')}, ${spent('new')} from cargo c
          where c.id = new.cargo_id and coalesce(new.cost_usd, 0) <> 0
          on conflict (project_id, day) do update set spent_nusd = project_spend_days.spent_nusd + excluded.spent_nusd;
      end`)
      .execute(db);
  }

  // What results stored before this migration cost, by day, so budgets start from the real spend.
  await sql
    .raw(`insert into project_spend_days (project_id, day, spent_nusd)
      select r.project_id, ${day('r')}, sum(${spent('r')}) from results r
      where r.project_id is not null and coalesce(r.cost_usd, 0) <> 0
      group by r.project_id, ${day('r')}`)
    .execute(db);
}
