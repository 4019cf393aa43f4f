// Id lists go into `in (...)` in chunks far below SQLite's 32,766 bound parameters.
const ID_CHUNK = 1000;

export function chunks<T>(items: T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Rows per multi-row insert of results or staged records: seven columns a row, far below the bound. */
export const RESULT_CHUNK = 500;
