/** Inserting new cargo rows and their requests, in multi-row statements. */
import type { CompiledQuery, Insertable } from 'kysely';
import { statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import type { CargoRequestsTable, CargoTable } from '../schema.js';

/** A new cargo: its row, and what it was sent with (kept in cargo_requests). */
export type NewCargo = Insertable<CargoTable> & Omit<CargoRequestsTable, 'cargo_id'>;

/** Parameters a cargo row binds (the wider of its two statements). */
const CARGO_COLUMNS = 14;

/** The bytes a cargo row carries (its request and metadata), for bounding groups and statements. */
export function cargoRowBytes(row: NewCargo): number {
  return row.request_bytes + (row.metadata?.length ?? 0);
}

/** Inserts many cargo rows in one transaction (tests and tools; the API's group commit writes cargoInsertStatements with more). */
export async function insertCargo(database: Database, rows: NewCargo[]): Promise<void> {
  await database.writeAll(cargoInsertStatements(database, rows));
}

/**
 * The statements that insert many cargo rows, in multi-row statements as large as
 * statementChunks allows: part of the group commit's transaction, which also counts their bytes
 * against the project's storage budget (Database.writeAll).
 */
export function cargoInsertStatements(database: Database, all: NewCargo[]): CompiledQuery[] {
  const db = database.write;
  return statementChunks(all, CARGO_COLUMNS, cargoRowBytes).flatMap((rows) => [
    db
      .insertInto('cargo')
      .values(rows.map(({ request: _, metadata: __, ...row }) => row))
      .compile(),
    db
      .insertInto('cargo_requests')
      .values(rows.map((r) => ({ cargo_id: r.id, request: r.request, metadata: r.metadata ?? null })))
      .compile(),
  ]);
}
