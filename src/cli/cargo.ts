import type { Command } from 'commander';
import { createRedelivery } from '../store/deliveries.js';
import type { CommandContext } from './context.js';
import { CliError, print } from './output.js';

export function registerCargoCommands(program: Command, run: CommandContext['run']): void {
  const cargo = program.command('cargo').description('Operate on cargo');

  cargo
    .command('redeliver <cargo-id>')
    .description('Schedule a fresh delivery of a finished cargo on every channel it asked for')
    .option('--json', 'print one JSON object')
    .action((cargoId: string, opts: { json?: boolean }) =>
      run(opts, async ({ database, clock, out }) => {
        const outcome = await createRedelivery(database, cargoId, clock.now());
        if ('refused' in outcome) throw new CliError(outcome.refused);
        print(
          out,
          { cargo_id: cargoId, channels: outcome.channels, status: 'callback_pending' },
          () => `Redelivery of ${cargoId} scheduled (${outcome.channels.join(', ')})`,
        );
      }),
    );
}
