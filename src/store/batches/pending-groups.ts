/** The (provider, model) groups that have pending cargo, and the projects waiting in each, for the batcher. */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import type { Schema } from '../schema.js';

/** A (provider, model) group: the cargo one batch may hold. */
export interface Group {
  provider: string;
  providerModel: string;
}

export interface PendingGroup extends Group {
  oldestAt: number;
}

export interface PendingProject {
  projectId: string;
  oldestAt: number;
}

/**
 * Every (provider, model) that has pending cargo, with its oldest cargo's time. Read from the
 * cargo_pending_by_project index, one seek for each group and each of its waiting projects (loose
 * index scans): GROUP BY would read every pending row, 150 ms with a million pending, and the
 * batcher asks before every batch it forms, which reads the same projects again.
 */
export async function pendingGroups(database: Database): Promise<PendingGroup[]> {
  const groups: PendingGroup[] = [];
  for (let group = await nextGroup(database, null); group; ) {
    const [oldest] = await pendingProjects(database.read, group);
    if (oldest) groups.push({ ...group, oldestAt: oldest.oldestAt });
    group =
      (await nextGroup(database, { provider: group.provider, modelAfter: group.providerModel })) ??
      (await nextGroup(database, { providerAfter: group.provider }));
  }
  return groups;
}

/** The first group with pending cargo in (provider, model) order after the given point. */
async function nextGroup(
  database: Database,
  after: { provider: string; modelAfter: string } | { providerAfter: string } | null,
): Promise<Group | null> {
  // Literal status: SQLite reads a partial index only for a condition it sees.
  let query = database.read
    .selectFrom('cargo')
    .select(['provider', 'provider_model'])
    .where(sql<boolean>`status = 'pending'`);
  // Two separate seeks: with a row-value comparison or an OR instead, SQLite scans the index.
  if (after && 'modelAfter' in after) {
    query = query.where('provider', '=', after.provider).where('provider_model', '>', after.modelAfter);
  } else if (after) {
    query = query.where('provider', '>', after.providerAfter);
  }
  const row = await query.orderBy('provider').orderBy('provider_model').limit(1).executeTakeFirst();
  return row ? { provider: row.provider, providerModel: row.provider_model } : null;
}

/**
 * The projects with pending cargo in the group, the one whose oldest cargo waited longest first:
 * one seek per project in the cargo_pending_by_project index (a loose index scan), in one
 * recursive statement. `status = 'pending'` is written out, as above. `db` is the reading
 * connection, or the transaction of a batch being formed.
 */
export async function pendingProjects(db: Kysely<Schema>, group: Group): Promise<PendingProject[]> {
  const where = sql`c.status = 'pending' and c.provider = ${group.provider} and c.provider_model = ${group.providerModel}`;
  const { rows } = await sql<{ project_id: string; oldest_at: number | string }>`
    with recursive projects (project_id) as (
      select min(c.project_id) from cargo c where ${where}
      union all
      select (select min(c.project_id) from cargo c where ${where} and c.project_id > projects.project_id)
      from projects where projects.project_id is not null
    )
    select project_id,
      (select min(c.created_at) from cargo c where ${where} and c.project_id = projects.project_id) as oldest_at
    from projects where project_id is not null`.execute(db);
  return rows
    .map((r) => ({ projectId: r.project_id, oldestAt: Number(r.oldest_at) }))
    .sort((a, b) => a.oldestAt - b.oldestAt || (a.projectId < b.projectId ? -1 : 1));
}
