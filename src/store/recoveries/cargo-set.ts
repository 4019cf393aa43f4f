/**
 * The set of cargo a bulk recovery redelivers, read a bounded page at a time: a project's cargo
 * created in [since, until) that are in `cargoStatus` and were already when the recovery was made
 * (`updated_at <= fixedAt`: a cargo that reaches the status later is never swept in), with a
 * result not purged. In id order, so a cursor (the last id looked at) says what is left.
 */
import type { Kysely, Transaction } from 'kysely';
import { firstIdAt } from '../../domain/ids.js';
import type { RecoverableCargoStatus } from '../../domain/lifecycle.js';
import { RARE_STATUS_CONDITION } from '../cargo/list.js';
import type { RedeliveredCargo } from '../deliveries/redeliver.js';
import type { Schema } from '../schema.js';

export interface CargoSet {
  projectId: string;
  cargoStatus: RecoverableCargoStatus;
  since: number;
  until: number;
  fixedAt: number;
}

export interface SetPage {
  /** The cargo of the set among those looked at, in id order. */
  cargo: RedeliveredCargo[];
  /** The last id looked at (the cursor for the next page); null: none was. */
  lastId: string | null;
  /** Nothing is left after lastId. */
  exhausted: boolean;
}

/**
 * Looks at the next `size` candidates after `after` and returns those of the set. Each page is
 * two bounded reads whatever the set's density: candidates by one index range (failed
 * deliveries: their own partial index, migration 017; delivered ones: the project's cargo by id),
 * then those candidates by primary key. A cargo's id is made at its `created_at` or later, so the
 * range starts at `since`'s first id; it has no upper bound (an id can be later than its
 * `created_at` when a clock stepped back), `created_at` decides. `lock`: on PostgreSQL the rows
 * returned are locked, so a concurrent redelivery of one of them waits and it drops out of the set.
 */
export async function readSetPage(
  db: Kysely<Schema> | Transaction<Schema>,
  set: CargoSet,
  after: string | null,
  size: number,
  lock = false,
): Promise<SetPage> {
  const from = firstIdAt('crg', set.since);
  // A cursor before the window's start starts the page at the window.
  const cursor = after !== null && after >= from ? after : null;
  const candidates = await db
    .selectFrom('cargo as c')
    .select('c.id')
    .where('c.project_id', '=', set.projectId)
    .$if(set.cargoStatus === 'callback_failed', (qb) =>
      qb.where('c.status', '=', 'callback_failed').where(RARE_STATUS_CONDITION),
    )
    .where('c.id', cursor === null ? '>=' : '>', cursor ?? from)
    .orderBy('c.id')
    .limit(size)
    .execute();
  if (candidates.length === 0) return { cargo: [], lastId: null, exhausted: true };
  const cargo = await db
    .selectFrom('cargo as c')
    .innerJoin('results as r', 'r.cargo_id', 'c.id')
    .select(['c.id', 'c.callback_url', 'c.callback'])
    .where(
      'c.id',
      'in',
      candidates.map((c) => c.id),
    )
    .where('c.status', '=', set.cargoStatus)
    .where('c.created_at', '>=', set.since)
    .where('c.created_at', '<', set.until)
    .where('c.updated_at', '<=', set.fixedAt)
    .where('r.purged_at', 'is', null)
    .orderBy('c.id')
    .$if(lock, (qb) => qb.forUpdate(['c']))
    .execute();
  return {
    cargo,
    lastId: (candidates[candidates.length - 1] as { id: string }).id,
    exhausted: candidates.length < size,
  };
}
