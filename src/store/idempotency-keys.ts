/** Idempotency-Key on POST /cargo/load: what a key was first used for, and its purge after 24 hours. */
import type { Database } from './database.js';

/** How long a key is kept (decisions.md, "Client operations"). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotentCargo {
  cargoId: string;
  /** SHA-256 hex of the body the key first came with. */
  bodySha256: string;
}

/**
 * The cargo a project's key made within the last 24 hours, if any. A key older than that is
 * deleted on the way (the purger may not have come by yet), so it can be used afresh; deleting it
 * twice, from two processes, is harmless.
 */
export async function findIdempotentCargo(
  database: Database,
  input: { projectId: string; key: string; now: number },
): Promise<IdempotentCargo | undefined> {
  const row = await database.read
    .selectFrom('idempotency_keys')
    .select(['cargo_id', 'body_sha256', 'created_at'])
    .where('project_id', '=', input.projectId)
    .where('key', '=', input.key)
    .executeTakeFirst();
  if (!row) return undefined;
  if (Number(row.created_at) <= input.now - IDEMPOTENCY_KEY_TTL_MS) {
    await database.write
      .deleteFrom('idempotency_keys')
      .where('project_id', '=', input.projectId)
      .where('key', '=', input.key)
      .where('created_at', '<=', input.now - IDEMPOTENCY_KEY_TTL_MS)
      .execute();
    return undefined;
  }
  return { cargoId: row.cargo_id, bodySha256: row.body_sha256 };
}

/** Deletes up to `limit` keys older than 24 hours, oldest first (one index range); how many went. */
export async function purgeIdempotencyKeys(database: Database, now: number, limit: number): Promise<number> {
  const result = await database.write
    .deleteFrom('idempotency_keys')
    .where((eb) =>
      eb(
        eb.refTuple('project_id', 'key'),
        'in',
        eb
          .selectFrom('idempotency_keys as k')
          .select(['k.project_id', 'k.key'])
          .where('k.created_at', '<=', now - IDEMPOTENCY_KEY_TTL_MS)
          .orderBy('k.created_at')
          .limit(limit)
          .$asTuple('project_id', 'key'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
