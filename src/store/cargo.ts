import type { Insertable, Kysely } from 'kysely';
import type { CargoStatus } from '../domain/lifecycle.js';
import type { CargoTable, Schema } from './schema.js';

export type NewCargo = Insertable<CargoTable>;

// SQLite binds at most 32,766 parameters per statement; 15 columns × 1,000 rows stays well below.
const INSERT_CHUNK = 1000;
/** A statement carries at most this much request text: far below PostgreSQL's 1 GB message limit. */
const INSERT_CHUNK_BYTES = 16 * 1024 * 1024;

/** The bytes a cargo row carries (its request and metadata), for bounding groups and statements. */
export function cargoRowBytes(row: NewCargo): number {
  return row.request_bytes + (row.metadata?.length ?? 0);
}

/**
 * Inserts many cargo rows in one transaction (the group-commit writer's flush), in multi-row
 * statements of at most INSERT_CHUNK rows and INSERT_CHUNK_BYTES (one larger row goes alone).
 */
export async function insertCargo(db: Kysely<Schema>, rows: NewCargo[]): Promise<void> {
  const parts: NewCargo[][] = [];
  let part: NewCargo[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = cargoRowBytes(row);
    if (part.length > 0 && (part.length >= INSERT_CHUNK || bytes + size > INSERT_CHUNK_BYTES)) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(row);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  // (storage budget) Inside the caller's transaction (the group commit counts the rows' bytes in
  // it), the statements run there: Kysely cannot nest transactions.
  if (parts.length === 1 || db.isTransaction) {
    for (const rows of parts) await db.insertInto('cargo').values(rows).execute();
    return;
  }
  await db.transaction().execute(async (tx) => {
    for (const rows of parts) await tx.insertInto('cargo').values(rows).execute();
  });
}

/** What tracking and the mailbox need: the cargo's state and, when there is one, its result. */
export interface CargoView {
  id: string;
  status: CargoStatus;
  metadata: string | null;
  createdAt: number;
  updatedAt: number;
  /** The cargo asked for a webhook or object delivery. */
  hasDeliveries: boolean;
  result: {
    success: boolean;
    response: string | null;
    errorMessage: string | null;
    createdAt: number;
    purged: boolean;
  } | null;
}

export async function findCargoForProject(
  db: Kysely<Schema>,
  projectId: string,
  cargoId: string,
): Promise<CargoView | undefined> {
  const row = await db
    .selectFrom('cargo as c')
    .leftJoin('results as r', 'r.cargo_id', 'c.id')
    .select([
      'c.id',
      'c.status',
      'c.metadata',
      'c.created_at',
      'c.updated_at',
      'c.callback_url',
      'c.callback',
      'r.success',
      'r.response',
      'r.error_message',
      'r.created_at as result_created_at',
      'r.purged_at',
    ])
    .where('c.id', '=', cargoId)
    .where('c.project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    status: row.status,
    metadata: row.metadata,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    hasDeliveries: row.callback_url !== null || row.callback !== null,
    result:
      row.success === null || row.result_created_at === null
        ? null
        : {
            success: row.success === 1,
            response: row.response,
            errorMessage: row.error_message,
            createdAt: row.result_created_at,
            purged: row.purged_at !== null,
          },
  };
}
