/**
 * Idempotency-Key on POST /cargo/load: what a key was first used for, which keys a group of new
 * cargo finds taken, and their purge after 24 hours.
 *
 * A new cargo's key is inserted with it (store/cargo/insert.ts), and the primary key refuses one
 * the project holds already: a new key costs no read. Only a refused write (or a refused request)
 * looks its key up, to answer what the key was first used for.
 */
import { chunks } from './chunks.js';
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

/**
 * Which of these keys each project used within the last 24 hours (as `projectId` and `key` joined
 * by a newline: a key is printable ASCII). Older ones are deleted on the way, so that a write
 * refused by one of them succeeds when tried again.
 */
export async function takenKeys(
  database: Database,
  keys: { projectId: string; key: string }[],
  now: number,
): Promise<Set<string>> {
  const byProject = new Map<string, Set<string>>();
  for (const { projectId, key } of keys) {
    const own = byProject.get(projectId);
    if (own) own.add(key);
    else byProject.set(projectId, new Set([key]));
  }
  const taken = new Set<string>();
  for (const [projectId, projectKeys] of byProject) {
    for (const part of chunks([...projectKeys])) {
      const rows = await database.read
        .selectFrom('idempotency_keys')
        .select(['key', 'created_at'])
        .where('project_id', '=', projectId)
        .where('key', 'in', part)
        .execute();
      const expired = rows.filter((r) => Number(r.created_at) <= now - IDEMPOTENCY_KEY_TTL_MS).map((r) => r.key);
      if (expired.length > 0) {
        await database.write
          .deleteFrom('idempotency_keys')
          .where('project_id', '=', projectId)
          .where('key', 'in', expired)
          .where('created_at', '<=', now - IDEMPOTENCY_KEY_TTL_MS)
          .execute();
      }
      for (const r of rows) {
        if (Number(r.created_at) > now - IDEMPOTENCY_KEY_TTL_MS) taken.add(keyOf(projectId, r.key));
      }
    }
  }
  return taken;
}

export const keyOf = (projectId: string, key: string) => `${projectId}\n${key}`;

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
