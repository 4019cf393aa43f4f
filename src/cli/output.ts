/** How CLI commands print: text or one JSON object (`--json`), refusals in the command's words, errors, tables. */
import type { OperationError, OperationErrorCode, Result } from '../operations/operation.js';

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

/** Refusals whose words on the command line are its own (they name flags or standard input). */
const CLI_WORDING: Partial<Record<OperationErrorCode, string>> = {
  invalid_key_name: '--name must not be empty',
  invalid_token_name: '--name must not be empty',
  invalid_access: 'give either --role-arn, or static credentials (--access-key-id and --secret-access-key-stdin)',
  endpoint_with_role: '--endpoint goes with static credentials; a role connection uses BARGE_AWS_S3_ENDPOINT',
  incomplete_credentials: 'static credentials need both --access-key-id and --secret-access-key-stdin',
  empty_secret: 'no secret access key on standard input',
  invalid_target: 'give one target: --bucket, --queue-url, --topic-arn or --event-bus-arn',
};

/**
 * An operation's refusal in the command's words: an input named by its flag (`flags` maps the
 * operation's input names to them), else the operation's own message.
 */
export function refusalMessage(error: OperationError, flags: Record<string, string> = {}): string {
  const wording = CLI_WORDING[error.code];
  if (wording) return wording;
  const flag = error.input && flags[error.input.name];
  if (error.input && flag) {
    const { value, problem } = error.input;
    return `invalid ${flag} '${value}'${problem === null ? '' : `: ${problem}`}`;
  }
  return error.message;
}

/** The operation's value, or its refusal thrown as the command's failure. */
export function unwrap<T>(result: Result<T>, flags?: Record<string, string>): T {
  if (!result.ok) throw new CliError(refusalMessage(result.error, flags));
  return result.value;
}

export function print(out: Output, data: object, text: () => string): void {
  process.stdout.write(out.json ? `${JSON.stringify(data)}\n` : `${text()}\n`);
}

export function printError(out: Output, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  if (out.json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  process.stderr.write(`barge: ${message}\n`);
}

/**
 * A command line the parser refused (an unknown command or option, a missing argument): the
 * parser has told it on stderr with the help; under --json stdout gets it too, as the one object
 * a failure prints, with the synopsis of the command that refused it.
 */
export function printUsageError(out: Output, message: string, usage: string): void {
  if (out.json) process.stdout.write(`${JSON.stringify({ error: message, usage })}\n`);
}

/** The exit code of a usage error (as POSIX utilities and argparse use it); any other failure exits 1. */
export const USAGE_EXIT_CODE = 2;

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
