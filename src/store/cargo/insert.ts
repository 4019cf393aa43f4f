/** Inserting new cargo rows and their requests, in multi-row statements. */
import type { CompiledQuery, Insertable } from 'kysely';
import { statementChunks } from '../chunks.js';
import type { Database } from '../database.js';
import { liveKeys } from '../idempotency-keys.js';
import type { CargoRequestsTable, CargoTable } from '../schema.js';

/** A new cargo: its row, what it was sent with (kept in cargo_requests), and its Idempotency-Key if it came with one. */
export type NewCargo = Insertable<CargoTable> &
  Omit<CargoRequestsTable, 'cargo_id'> & { idempotency?: { key: string; bodySha256: string } };

/** Parameters a cargo row binds (the wider of its two statements). */
const CARGO_COLUMNS = 15;

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
 * against the project's storage budget (Database.writeAll). A row's Idempotency-Key goes in the
 * same transaction: a key another request holds already fails it (the primary key), and the
 * group commit asks refusedCargo which rows to leave out, so that request alone is refused
 * (store/idempotency-keys.ts says what it is answered).
 */
export function cargoInsertStatements(database: Database, all: NewCargo[]): CompiledQuery[] {
  const db = database.write;
  return statementChunks(all, CARGO_COLUMNS, cargoRowBytes).flatMap((rows) => {
    const keyed = rows.filter((r) => r.idempotency !== undefined);
    return [
      db
        .insertInto('cargo')
        .values(
          rows.map(({ request: _, metadata: __, idempotency: ___, ...row }) => ({
            ...row,
            reserved_nusd: row.reserved_nusd ?? 0,
          })),
        )
        .compile(),
      db
        .insertInto('cargo_requests')
        .values(rows.map((r) => ({ cargo_id: r.id, request: r.request, metadata: r.metadata ?? null })))
        .compile(),
      ...(keyed.length === 0
        ? []
        : [
            db
              .insertInto('idempotency_keys')
              .values(
                keyed.map((r) => ({
                  project_id: r.project_id,
                  key: (r.idempotency as { key: string }).key,
                  body_sha256: (r.idempotency as { bodySha256: string }).bodySha256,
                  cargo_id: r.id,
                  created_at: r.created_at,
                })),
              )
              .compile(),
          ]),
    ];
  });
}

/** Why a new cargo was not stored: the project used its Idempotency-Key already. */
export class IdempotencyKeyTaken extends Error {
  constructor() {
    super('the Idempotency-Key was used already');
    this.name = 'IdempotencyKeyTaken';
  }
}

/**
 * The rows of a failed group commit that its transaction refuses for their Idempotency-Key: a key
 * the project used in the last 24 hours, or one an earlier row of the group carries (that row
 * stays). Both are refused with IdempotencyKeyTaken; the group commits again without them.
 */
export async function refusedCargo(database: Database, rows: NewCargo[], now: number): Promise<Map<NewCargo, Error>> {
  const keyedByProject = new Map<string, (NewCargo & { idempotency: { key: string } })[]>();
  for (const row of rows) {
    if (row.idempotency === undefined) continue;
    const keyed = row as NewCargo & { idempotency: { key: string } };
    const own = keyedByProject.get(row.project_id);
    if (own) own.push(keyed);
    else keyedByProject.set(row.project_id, [keyed]);
  }
  const refused = new Map<NewCargo, Error>();
  for (const [projectId, keyed] of keyedByProject) {
    const keys = [...new Set(keyed.map((r) => r.idempotency.key))];
    const taken = new Set((await liveKeys(database, projectId, keys, now)).map((k) => k.key));
    for (const row of keyed) {
      if (taken.has(row.idempotency.key)) refused.set(row, new IdempotencyKeyTaken());
      else taken.add(row.idempotency.key);
    }
  }
  return refused;
}
