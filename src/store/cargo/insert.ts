import type { Insertable, Transaction } from 'kysely';
import type { Database } from '../database.js';
import type { CargoRequestsTable, CargoTable, Schema } from '../schema.js';

/** A new cargo: its row, and what it was sent with (kept in cargo_requests). */
export type NewCargo = Insertable<CargoTable> & Omit<CargoRequestsTable, 'cargo_id'>;

// SQLite binds at most 32,766 parameters per statement; 13 columns × 1,000 rows stays well below.
const INSERT_CHUNK = 1000;
/** A statement carries at most this much request text: far below PostgreSQL's 1 GB message limit. */
const INSERT_CHUNK_BYTES = 16 * 1024 * 1024;

/** The bytes a cargo row carries (its request and metadata), for bounding groups and statements. */
export function cargoRowBytes(row: NewCargo): number {
  return row.request_bytes + (row.metadata?.length ?? 0);
}

/** Inserts many cargo rows in one transaction (tests and tools; the API's group commit uses insertCargoRows). */
export async function insertCargo(database: Database, rows: NewCargo[]): Promise<void> {
  await database.write.transaction().execute((tx) => insertCargoRows(tx, rows));
}

/**
 * Inserts many cargo rows as a step of the caller's transaction (the group commit's, which also
 * counts their bytes against the project's storage budget), in multi-row statements of at most
 * INSERT_CHUNK rows and INSERT_CHUNK_BYTES (one larger row goes alone).
 */
export async function insertCargoRows(tx: Transaction<Schema>, rows: NewCargo[]): Promise<void> {
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
  for (const rows of parts) {
    await tx
      .insertInto('cargo')
      .values(rows.map(({ request: _, metadata: __, ...row }) => row))
      .execute();
    await tx
      .insertInto('cargo_requests')
      .values(rows.map((r) => ({ cargo_id: r.id, request: r.request, metadata: r.metadata ?? null })))
      .execute();
  }
}
