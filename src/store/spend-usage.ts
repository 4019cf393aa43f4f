/**
 * The spend counters of a project (migration 019), kept as the storage counters are
 * (store/storage-usage.ts): the cargo insert adds its reservations to `project_spend` in its own
 * transaction (the group commit's, Database.writeAll); results stored (their cost, and the
 * reservation each releases) move `project_spend` and `project_spend_days` through a trigger: on
 * PostgreSQL through `spend_changes`, which the insert folds for its projects; on SQLite directly. A read is the project's row, its days of the month and its few changes
 * not folded yet: nothing sums a table of results.
 */
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { periodStarts, type Spend } from '../domain/spend.js';
import type { Database, Dialect } from './database.js';
import type { Schema } from './schema.js';

/**
 * The statements that count what accepted cargo reserve (nano-USD) and fold the results' changes
 * of the same projects, in the insert's transaction. Only projects that reserve something take
 * part (svc-mock reserves nothing: it adds no statement). The counter rows are locked in project
 * order in the first statement, so flushes of several API processes never deadlock.
 */
export function reservedCargoStatements(
  database: Database,
  accepted: { projectId: string; reservedNusd: number }[],
): CompiledQuery[] {
  const byProject = new Map<string, number>();
  for (const { projectId, reservedNusd } of accepted) {
    if (reservedNusd > 0) byProject.set(projectId, (byProject.get(projectId) ?? 0) + reservedNusd);
  }
  if (byProject.size === 0) return [];
  const db = database.write;
  const projectIds = [...byProject.keys()].sort();
  const reserve = db
    .insertInto('project_spend')
    .values(projectIds.map((id) => ({ project_id: id, reserved_nusd: byProject.get(id) as number })))
    .onConflict((oc) =>
      oc.column('project_id').doUpdateSet({
        reserved_nusd: sql`project_spend.reserved_nusd + excluded.reserved_nusd`,
      }),
    )
    .compile();
  return [reserve, ...foldChanges(db, database.dialect, projectIds)];
}

/**
 * Moves the projects' change rows into their counters and deletes them, in one statement: a
 * change a concurrent collector adds meanwhile is folded next time, never lost. Only PostgreSQL
 * has change rows: SQLite's trigger moves the counters itself (migration 019).
 */
function foldChanges(db: Kysely<Schema>, dialect: Dialect, projectIds: string[]): CompiledQuery[] {
  if (dialect !== 'postgres') return [];
  const ids = sql.join(projectIds);
  return [
    sql`with gone as (delete from spend_changes where project_id in (${ids})
          returning project_id, day, spent_nusd, reserved_nusd),
        released as (update project_spend set reserved_nusd = project_spend.reserved_nusd + s.reserved
          from (select project_id, sum(reserved_nusd) as reserved from gone group by project_id) s
          where project_spend.project_id = s.project_id)
        insert into project_spend_days (project_id, day, spent_nusd)
          select project_id, day, sum(spent_nusd) from gone where spent_nusd <> 0 group by project_id, day
        on conflict (project_id, day) do update
          set spent_nusd = project_spend_days.spent_nusd + excluded.spent_nusd`.compile(db),
  ];
}

/** A project's spend at `now`: reserved, spent this UTC month and this UTC day; one round trip. */
export async function readSpend(database: Database, projectId: string, now: number): Promise<Spend> {
  const { month, day } = periodStarts(now);
  const { rows } = await sql<{
    reserved: string | number | null;
    month: string | number | null;
    day: string | number | null;
  }>`
    select
      coalesce((select reserved_nusd from project_spend where project_id = ${projectId}), 0)
        + (select coalesce(sum(reserved_nusd), 0) from spend_changes where project_id = ${projectId}) as reserved,
      (select coalesce(sum(spent_nusd), 0) from project_spend_days
        where project_id = ${projectId} and day >= ${month})
        + (select coalesce(sum(spent_nusd), 0) from spend_changes where project_id = ${projectId} and day >= ${month})
        as month,
      (select coalesce(sum(spent_nusd), 0) from project_spend_days where project_id = ${projectId} and day = ${day})
        + (select coalesce(sum(spent_nusd), 0) from spend_changes where project_id = ${projectId} and day = ${day})
        as day`.execute(database.read);
  const row = rows[0];
  return {
    reserved: Number(row?.reserved ?? 0),
    month: Number(row?.month ?? 0),
    day: Number(row?.day ?? 0),
    monthStart: month,
    dayStart: day,
  };
}
