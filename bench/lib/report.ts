/** The printed figures of the benches: number formats, the runs' spread, the common report lines. */
import { cpus, totalmem } from 'node:os';
import { median } from './stats.js';

/** A progress line, on stderr (the report itself goes to stdout). */
export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A whole number with thousands separators: 12,345. */
export function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Whole milliseconds: `12 ms`. */
export function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

/** The (lower) median of the runs, then every run's figure, to show how stable it was. */
export function spread(values: number[], format: (v: number) => string): string {
  if (values.length === 1) return format(values[0] as number);
  return `${format(median(values))} (runs: ${values.map(format).join(', ')})`;
}

export function goal(met: boolean): string {
  return met ? 'met' : 'NOT met';
}

/** `  machine: …`: cores, CPU model, memory and node version. */
export function machineLine(): string {
  return `  machine: ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

/** What freshDatabase gives each run, for the report's `database:` line. */
export function databaseKind(pgUrl: string | null): string {
  return pgUrl ? 'PostgreSQL (fresh schema a run)' : 'SQLite temp file (WAL, synchronous=FULL)';
}
