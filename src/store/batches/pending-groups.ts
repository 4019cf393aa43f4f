/** The (provider, model) groups that have pending cargo, with their oldest cargo's time, for the batcher. */
import type { Database } from '../database.js';

export interface PendingGroup {
  provider: string;
  providerModel: string;
  oldestAt: number;
}

/**
 * Every (provider, model) that has pending cargo, with its oldest cargo's time. Read group after
 * group from the cargo_pending index, one seek each (a loose index scan): GROUP BY would read every
 * pending row, 150 ms with a million pending, and the batcher asks before every batch it forms.
 */
export async function pendingGroups(database: Database): Promise<PendingGroup[]> {
  const groups: PendingGroup[] = [];
  for (let group = await oldestPending(database, null); group; ) {
    groups.push(group);
    group =
      (await oldestPending(database, { provider: group.provider, modelAfter: group.providerModel })) ??
      (await oldestPending(database, { providerAfter: group.provider }));
  }
  return groups;
}

/** The oldest pending cargo's group, first in (provider, model) order after the given point. */
async function oldestPending(
  database: Database,
  after: { provider: string; modelAfter: string } | { providerAfter: string } | null,
): Promise<PendingGroup | null> {
  let query = database.read
    .selectFrom('cargo')
    .select(['provider', 'provider_model', 'created_at'])
    .where('status', '=', 'pending');
  // Two separate seeks: with a row-value comparison or an OR instead, SQLite scans the index.
  if (after && 'modelAfter' in after) {
    query = query.where('provider', '=', after.provider).where('provider_model', '>', after.modelAfter);
  } else if (after) {
    query = query.where('provider', '>', after.providerAfter);
  }
  const row = await query
    .orderBy('provider')
    .orderBy('provider_model')
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
  return row ? { provider: row.provider, providerModel: row.provider_model, oldestAt: Number(row.created_at) } : null;
}
