/**
 * Idempotency-Key on POST /cargo/load: what a key was first used for, which of a project's keys
 * are in use, and their purge after 24 hours.
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
 * The cargo a project's key made within the last 24 hours, if any (an older key is deleted on the
 * way, as liveKeys says).
 */
export async function findIdempotentCargo(
  database: Database,
  input: { projectId: string; key: string; now: number },
): Promise<IdempotentCargo | undefined> {
  const [row] = await liveKeys(database, input.projectId, [input.key], input.now);
  return row && { cargoId: row.cargo_id, bodySha256: row.body_sha256 };
}

/**
 * Which of a project's keys it used within the last 24 hours, with what each made. An older key
 * is deleted on the way (the purger may not have come by yet), so it can be used afresh, and a
 * write it refused succeeds when tried again; deleting it twice, from two processes, is harmless.
 */
export async function liveKeys(
  database: Database,
  projectId: string,
  keys: string[],
  now: number,
): Promise<{ key: string; cargo_id: string; body_sha256: string }[]> {
  const cutoff = now - IDEMPOTENCY_KEY_TTL_MS;
  const live: { key: string; cargo_id: string; body_sha256: string }[] = [];
  for (const part of chunks(keys)) {
    const rows = await database.read
      .selectFrom('idempotency_keys')
      .select(['key', 'cargo_id', 'body_sha256', 'created_at'])
      .where('project_id', '=', projectId)
      .where('key', 'in', part)
      .execute();
    const expired = rows.filter((r) => Number(r.created_at) <= cutoff).map((r) => r.key);
    if (expired.length > 0) {
      await database.write
        .deleteFrom('idempotency_keys')
        .where('project_id', '=', projectId)
        .where('key', 'in', expired)
        .where('created_at', '<=', cutoff)
        .execute();
    }
    for (const { created_at, ...row } of rows) if (Number(created_at) > cutoff) live.push(row);
  }
  return live;
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
