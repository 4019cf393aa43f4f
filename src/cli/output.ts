/** Every command prints either text for people or exactly one JSON object (`--json`). */
export interface Output {
  json: boolean;
}

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

export function print(out: Output, data: object, text: () => string): void {
  process.stdout.write(out.json ? `${JSON.stringify(data)}\n` : `${text()}\n`);
}

export function printError(out: Output, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  if (out.json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  process.stderr.write(`barge: ${message}\n`);
}

/** A plain text table: one row per item, columns padded to the widest cell. */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
