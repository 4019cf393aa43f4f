#!/usr/bin/env -S node --max-old-space-size=1024
// The `barge` command: serve, migrate, the admin commands (projects, keys, connections, cargo,
// providers, usage), and the user commands over HTTP (submit, results, wait, cancel, list, tail).
//
// The heap limit: with none, V8 sizes the heap from the machine's memory and lets garbage pile up
// to hundreds of megabytes before a full collection (bench:pipeline --rss); with one it collects
// early. 1 GiB is far above what barge holds (request bodies in flight are bounded at 128 MiB).
import { Command, CommanderError } from 'commander';
import { packageVersion } from '../package-root.js';
import { registerCargoClientCommands } from './cargo-commands.js';
import { printUsageError, USAGE_EXIT_CODE } from './output.js';
import { registerResultsCommand } from './results.js';
import { registerSubmitCommand } from './submit.js';

/** The command whose command line commander refused: it calls the exit override on that command. */
let refusedBy: Command | null = null;

const program = new Command('barge')
  .description('Batch gateway for model requests')
  .version(packageVersion())
  .showHelpAfterError()
  // Set before the subcommands are made, which inherit it: a refused command line comes back to
  // the parseAsync at the end of this file instead of ending the process there and then.
  .exitOverride(function (this: Command, err) {
    refusedBy = this;
    throw err;
  });

/**
 * The user commands: they talk HTTP to a running service, so a process that runs one loads neither
 * the service nor the database layer (operator-commands.ts). Any other command line, `--help`
 * included, registers every command.
 */
const USER_COMMANDS = new Set(['submit', 'results', 'wait', 'cancel', 'list', 'tail']);
if (!USER_COMMANDS.has(process.argv[2] ?? '')) {
  const { registerOperatorCommands } = await import('./operator-commands.js');
  registerOperatorCommands(program);
}
registerSubmitCommand(program);
registerResultsCommand(program);
registerCargoClientCommands(program);

try {
  await program.parseAsync();
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  // --help and --version end here too.
  if (err.exitCode !== 0) {
    const command: Command = refusedBy ?? program;
    // A command group without its subcommand (`barge key`) shows its help and no message.
    const message = err.code === 'commander.help' ? 'missing command' : err.message.replace(/^error: /, '');
    printUsageError(
      { json: jsonRequested(process.argv.slice(2)) },
      message,
      command.createHelp().commandUsage(command),
    );
    process.exitCode = USAGE_EXIT_CODE;
  }
}

/** Whether --json was given (before a `--`): read from the arguments, since their parse failed. */
function jsonRequested(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}
