/** How the user commands run: over HTTP through the typed client (never the database), with their exit codes. */
import { type Command, InvalidArgumentError } from 'commander';
import { Agent } from 'undici';
import { Barge } from '../client/barge.js';
import { BargeError } from '../client/errors.js';
import { type Output, printError, printUsageError, USAGE_EXIT_CODE } from './output.js';
import { undiciTransport } from './undici-transport.js';

/** Exit codes of the user commands: 1 a refused or failed item, 2 a usage error, 3 the service unreachable. */
export const EXIT = { failed: 1, usage: USAGE_EXIT_CODE, unreachable: 3, interrupted: 130 } as const;

export interface ClientOptions {
  url?: string;
  key?: string;
  json?: boolean;
}

/** A command line that parses but does not make sense (`submit` without --model): exit 2. */
export class UsageError extends Error {}

export interface ClientCommandDeps {
  barge: Barge;
  out: Output;
}

/** A count option (--concurrency, --limit, --max-tokens): a whole number from 1. */
export function parsePositive(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** The options every user command takes: where the service is, the key, --json. */
export function withClientOptions(command: Command): Command {
  return command
    .option('--url <url>', 'the service (default: BARGE_BASE_URL, else http://localhost:8080)')
    .option('--key <key>', 'an API key of the project (default: BARGE_API_KEY)')
    .option('--json', 'print one JSON object');
}

/** The service's address, refused as a usage error when it is not an http(s) URL (not retried as unreachable). */
function checkedUrl(flag: string | undefined): string | undefined {
  const url = flag ?? process.env.BARGE_BASE_URL;
  if (url !== undefined && !/^https?:$/.test(URL.parse(url)?.protocol ?? '')) {
    throw new UsageError(`${flag === undefined ? 'BARGE_BASE_URL' : '--url'} must be an http(s) URL, got '${url}'`);
  }
  return url;
}

/** The project's key: without one every request would be refused, so the command is refused first. */
function checkedKey(flag: string | undefined): string {
  const key = flag ?? process.env.BARGE_API_KEY;
  if (!key) throw new UsageError('no API key: give --key or set BARGE_API_KEY');
  return key;
}

/**
 * A cargo that has no result to wait for (404: not found for this key; 410: past its retention):
 * a failed item of a command over many cargo, not the end of the command. Null for other errors.
 */
export function missingCargo(err: unknown): { status: string; error_message: string } | null {
  if (!(err instanceof BargeError) || (err.status !== 404 && err.status !== 410)) return null;
  return { status: err.status === 404 ? 'not_found' : 'expired', error_message: err.message };
}

/**
 * Runs a user command over `agent`'s connections; its failure sets the exit code it stands for. A
 * body may set exitCode itself.
 */
export async function runClient(
  command: Command,
  opts: ClientOptions,
  body: (deps: ClientCommandDeps) => Promise<void>,
  agent: Agent = new Agent(),
): Promise<void> {
  const out: Output = { json: opts.json === true };
  try {
    const transport = undiciTransport(agent);
    await body({ barge: new Barge({ baseUrl: checkedUrl(opts.url), apiKey: checkedKey(opts.key), transport }), out });
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`barge: ${err.message}\n`);
      printUsageError(out, err.message, command.createHelp().commandUsage(command));
      process.exitCode = EXIT.usage;
      return;
    }
    printError(out, err);
    process.exitCode = err instanceof BargeError && err.status === 0 ? EXIT.unreachable : EXIT.failed;
  } finally {
    // Its idle keep-alive connections would hold the process open for seconds.
    await agent.destroy();
  }
}
