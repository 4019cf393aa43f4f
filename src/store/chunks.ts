import { CompiledQuery, sql } from 'kysely';
import type { Database, Dialect } from './database.js';
import type { Schema } from './schema.js';

/**
 * How big one statement may get. Multi-row statements save round trips (on a SQLite file each is
 * one to the write thread), but Kysely compiles each on the event loop, in one go: 30,000
 * parameters (2,500 results) took 15-35 ms, which a /health request waited out; 6,000 (500
 * results) take about 2 ms. Both databases allow more (SQLite binds at most 32,766 parameters,
 * PostgreSQL 65,535, and a PostgreSQL message is at most 1 GB).
 */
const PARAMETERS_PER_STATEMENT = 6_000;
const BYTES_PER_STATEMENT = 16 * 1024 * 1024;

/** Id lists for `in (...)`, at most this many ids a statement. */
const ID_CHUNK = 5000;

export function chunks<T>(items: T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Rows for multi-row statements of `columns` parameters a row: as many as the parameter bound
 * allows, and no more than BYTES_PER_STATEMENT of the text `bytesOf` counts (one larger row goes
 * alone).
 */
export function statementChunks<T>(items: T[], columns: number, bytesOf: (item: T) => number = () => 0): T[][] {
  const maxRows = Math.floor(PARAMETERS_PER_STATEMENT / columns);
  const out: T[][] = [];
  let part: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = bytesOf(item);
    if (part.length > 0 && (part.length >= maxRows || bytes + size > BYTES_PER_STATEMENT)) {
      out.push(part);
      part = [];
      bytes = 0;
    }
    part.push(item);
    bytes += size;
  }
  if (part.length > 0) out.push(part);
  return out;
}

/**
 * Deletes the rows of `table` whose `key` is `id`, `size` a statement (each its own transaction)
 * in `order`, so no one transaction holds the writer long while a large set goes.
 */
export async function deleteInChunks(
  database: Database,
  rows: { table: keyof Schema; key: string; id: string; order: string; size: number },
): Promise<void> {
  const { key, id, order, size } = rows;
  const table = sql.table(rows.table);
  for (;;) {
    const result = await sql`
      delete from ${table} where ${sql.ref(key)} = ${id} and ${sql.ref(order)} in (
        select ${sql.ref(order)} from ${table} where ${sql.ref(key)} = ${id} order by ${sql.ref(order)} limit ${size})`.execute(
      database.write,
    );
    if (Number(result.numAffectedRows ?? 0) < size) return;
  }
}

/**
 * A multi-row insert of `columns` into `table`, with `tail` after its values (an ON CONFLICT
 * clause), compiled without Kysely's builder: the builder makes and visits a node per value, about
 * 1 ms for an insert of 400 rows of 15 columns on the event loop, a twentieth of a drain's
 * (bench/RESULTS.md). The text is the one Kysely writes; each row's placeholders are made once.
 */
export class RowsInsert<Column extends string> {
  private readonly head: string;
  private readonly tail: string;
  /** Each row's placeholders, `(?, ?, …)` or `($16, $17, …)`, made as far as a statement needed. */
  private readonly rowTexts: Record<Dialect, string[]> = { sqlite: [], postgres: [] };

  constructor(
    table: keyof Schema,
    private readonly columns: readonly Column[],
    tail: string,
  ) {
    this.head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `;
    this.tail = ` ${tail}`;
  }

  compile(dialect: Dialect, rows: readonly Record<Column, unknown>[]): CompiledQuery {
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of this.columns) parameters.push(row[column]);
    const texts = this.rowTexts[dialect];
    while (texts.length < rows.length) texts.push(this.rowText(dialect, texts.length));
    return CompiledQuery.raw(`${this.head}${texts.slice(0, rows.length).join(', ')}${this.tail}`, parameters);
  }

  private rowText(dialect: Dialect, row: number): string {
    const width = this.columns.length;
    const values: string[] = [];
    for (let c = 0; c < width; c++) values.push(dialect === 'postgres' ? `$${row * width + c + 1}` : '?');
    return `(${values.join(', ')})`;
  }
}
