/**
 * The operator's commands: `serve`, `migrate`, and the admin commands that open the database
 * (projects, keys, admin tokens, cargo, connections, usage) or read the configuration (providers).
 * main.ts loads this module only for them: the user commands talk HTTP, and a process that runs
 * one need not load the service and the database layer (0.3 s and 16 MB at every start).
 */
import { type Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../config.js';
import { migrateDatabase } from '../operations/migrate-database.js';
import type { Role } from '../service.js';
import { registerAdminTokenCommands } from './admin-tokens.js';
import { registerCargoCommands } from './cargo.js';
import { registerConnectionCommands } from './connections.js';
import { runCommand, runWithConfig } from './context.js';
import { registerKeyCommands } from './keys.js';
import { print, printError } from './output.js';
import { registerProjectCommands } from './projects.js';
import { registerProviderCommands } from './providers.js';
import { registerUsageCommand } from './usage.js';

export function registerOperatorCommands(program: Command): void {
  program
    .command('serve')
    .description('Run the service: the HTTP API, the workers, or both')
    .option('--role <role>', 'all | api | worker', parseRole, 'all' as Role)
    .option('--port <n>', 'port to listen on (default: PORT, else 8080)', parsePort)
    .option('--json', 'print the start-up summary as one JSON object; logs go to stderr')
    .action(async (opts: { role: Role; port?: number; json?: boolean }) => {
      const out = { json: opts.json === true };
      try {
        const config = loadConfig();
        if (opts.port !== undefined) config.port = opts.port;
        // Loaded here, not at the top: the HTTP stack would add ~0.3 s to every admin command.
        const { createService } = await import('../service.js');
        const { firstStartKeyAnnouncer } = await import('../first-start.js');
        const terminal = process.stdout.isTTY === true && !out.json;
        // The AWS SDK warns at its first client about Node versions it will drop; README's engines
        // line says which versions barge supports, so the warning is not repeated at every start.
        process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
        const service = await createService({
          config,
          role: opts.role,
          announce: firstStartKeyAnnouncer(config, { terminal }),
          logToStderr: out.json,
          prettyLogs: terminal,
        });
        const stop = (signal: string) => {
          service.app?.log.info({ signal }, 'shutting down');
          service.close().then(
            () => process.exit(0),
            (err: unknown) => {
              printError(out, err);
              process.exit(1);
            },
          );
        };
        // Handlers first, then the ready line: a supervisor that signals as soon as it reads the
        // line must get a clean shutdown, not the default kill.
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
        // A database that did not answer at start is prepared when it does; if that fails (logged),
        // the process ends for its supervisor to see.
        service.ready.catch(() => service.close().finally(() => process.exit(1)));
        print(
          out,
          { role: opts.role, url: service.url },
          () => `barge ${opts.role} ${service.url ? `listening on ${service.url}` : 'running'}`,
        );
      } catch (err) {
        printError(out, err);
        process.exit(1);
      }
    });

  program
    .command('migrate')
    .description('Apply database migrations')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const out = { json: opts.json === true };
      try {
        const { applied, sealedWebhookSecrets: sealed } = await migrateDatabase(loadConfig());
        print(out, { applied, ...(sealed === null ? {} : { sealed_webhook_secrets: sealed }) }, () =>
          [
            applied.length ? `Applied ${applied.join(', ')}` : 'Database is up to date',
            ...(sealed ? [`Sealed the webhook signing secrets of ${sealed} project(s)`] : []),
          ].join('\n'),
        );
      } catch (err) {
        printError(out, err);
        process.exitCode = 1;
      }
    });

  registerProjectCommands(program, runCommand);
  registerKeyCommands(program, runCommand);
  registerAdminTokenCommands(program, runCommand);
  registerCargoCommands(program, runCommand);
  registerConnectionCommands(program, runCommand);
  registerUsageCommand(program, runCommand);
  // Needs the configuration only: it never opens the database.
  registerProviderCommands(program, runWithConfig);
}

function parseRole(value: string): Role {
  if (value === 'all' || value === 'api' || value === 'worker') return value;
  throw new InvalidArgumentError('must be all, api or worker');
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('must be a port number');
  return port;
}
