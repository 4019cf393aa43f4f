/**
 * Command-line options shared by the benches: bounded numbers (so a typo cannot start an hour-long
 * run or fill the disk), one value of a fixed set, a list of modes (`--only`), and the PostgreSQL
 * URL of `--db` / BENCH_DATABASE_URL.
 */

/**
 * `raw` as a number from `min` to `max`; an integer unless `kind` is 'number'. Throws, naming the
 * flag, otherwise.
 */
export function bounded(
  name: string,
  raw: string,
  min: number,
  max: number,
  kind: 'integer' | 'number' = 'integer',
): number {
  const value = Number(raw);
  const valid = kind === 'integer' ? Number.isInteger(value) : Number.isFinite(value);
  if (!valid || value < min || value > max) {
    throw new Error(
      `--${name} must be ${kind === 'integer' ? 'an integer' : 'a number'} from ${min} to ${max}, got '${raw}'`,
    );
  }
  return value;
}

export function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(raw)) throw new Error(`--${name} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

/** The comma-separated modes of `--only` (all of them when it is absent), each checked. */
export function modeList<T extends string>(raw: string | undefined, modes: readonly T[]): T[] {
  const only = (raw ?? modes.join(',')).split(',').map((m) => m.trim());
  for (const mode of only) {
    if (!(modes as readonly string[]).includes(mode))
      throw new Error(`--only takes ${modes.join(', ')}; got '${mode}'`);
  }
  return only as T[];
}

/** `--db` (else BENCH_DATABASE_URL): a postgres:// URL, or null for a temp SQLite file. */
export function postgresUrl(flag: string | undefined): string | null {
  const pgUrl = flag ?? process.env.BENCH_DATABASE_URL ?? null;
  if (pgUrl !== null && !/^postgres(ql)?:\/\//.test(pgUrl)) throw new Error('--db must be a postgres:// URL');
  return pgUrl;
}
