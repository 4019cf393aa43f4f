/** A project's cargo, newest first, a page at a time: GET /cargo. */

import { sql } from 'kysely';
import { firstIdAt } from '../../domain/ids.js';
import type { CargoStatus } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import { metadataOf } from '../metadata.js';

/**
 * The statuses with an index of their own (cargo_by_project_rare_status, migrations 017 and 027):
 * a list of them reads only their rows, at any depth. Other statuses are common where they are (the
 * newest cargo, or most of them) and are found along cargo_by_project. Spelled as literals in the
 * query, as the index's condition is on SQLite: SQLite uses a partial index only for a condition
 * it can see is the index's own. PostgreSQL sees that it implies its `in` list.
 */
const RARE_STATUSES: readonly CargoStatus[] = ['failed', 'callback_failed', 'canceled'];
export const RARE_STATUS_CONDITION = sql<boolean>`(${sql.join(
  RARE_STATUSES.map((status) => sql`c.status = ${sql.lit(status)}`),
  sql` or `,
)})`;

export interface CargoFilter {
  status?: CargoStatus;
  model?: string;
  /** Epoch ms: created strictly after / before. */
  createdAfter?: number;
  createdBefore?: number;
  /** The last id of the previous page: this page starts below it. */
  after?: string;
  limit: number;
}

export interface ListedCargo {
  id: string;
  status: CargoStatus;
  /** The model id as submitted. */
  model: string;
  createdAt: number;
  updatedAt: number;
  /** As in CargoView: what tracking's description says of a failed cargo, or of a batch's retries. */
  resultError: string | null;
  submitError: string | null;
  /** The JSON text of the metadata it was submitted with, or null. */
  metadata: string | null;
}

/**
 * One page of a project's cargo, newest first, by keyset on the id: cargo ids are monotonic ULIDs
 * (src/domain/ids.ts), so "newest first" is id order and a page is one range of `cargo_by_project`
 * (the model is checked inside it; a rare status reads its own partial index), `limit + 1` rows
 * long at any depth. Cargo created meanwhile sort above every page already read: a cursor stays valid.
 *
 * An id's time is its `created_at` or later, never earlier (the monotonic factory keeps the last
 * time when the clock steps back), so `created_after` also bounds the range from below; the time
 * filters themselves are checked on `created_at`. `created_before` has no id bound: the range
 * starts at the newest cargo (or the cursor) and passes those created since.
 */
export async function listCargo(
  database: Database,
  projectId: string,
  filter: CargoFilter,
): Promise<{ cargo: ListedCargo[]; hasMore: boolean }> {
  let query = database.read
    .selectFrom('cargo as c')
    .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
    .leftJoin('compat_cargo as m', 'm.cargo_id', 'c.id')
    .leftJoin('results as r', 'r.cargo_id', 'c.id')
    .leftJoin('batches as b', 'b.id', 'c.batch_id')
    .select([
      'c.id',
      metadataOf,
      'c.status',
      'c.model',
      'c.created_at',
      'c.updated_at',
      'r.error_message',
      'b.status as batch_status',
      'b.last_error as batch_error',
    ])
    .where('c.project_id', '=', projectId);
  if (filter.status !== undefined) {
    query = query.where('c.status', '=', filter.status);
    if (RARE_STATUSES.includes(filter.status)) query = query.where(RARE_STATUS_CONDITION);
  }
  if (filter.model !== undefined) query = query.where('c.model', '=', filter.model);
  if (filter.after !== undefined) query = query.where('c.id', '<', filter.after);
  if (filter.createdBefore !== undefined) query = query.where('c.created_at', '<', filter.createdBefore);
  if (filter.createdAfter !== undefined) {
    query = query
      .where('c.id', '>=', firstIdAt('crg', filter.createdAfter + 1))
      .where('c.created_at', '>', filter.createdAfter);
  }
  const rows = await query
    .orderBy('c.id', 'desc')
    .limit(filter.limit + 1)
    .execute();
  return {
    cargo: rows.slice(0, filter.limit).map((row) => ({
      id: row.id,
      status: row.status,
      model: row.model,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
      resultError: row.error_message,
      submitError: row.batch_status === 'submitting' ? row.batch_error : null,
      metadata: row.metadata,
    })),
    hasMore: rows.length > filter.limit,
  };
}
