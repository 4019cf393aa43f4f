/** `barge cargo …`: the CLI's cargo commands (redeliver), thin adapters over src/operations/. */
import type { Command } from 'commander';
import { redeliverCargo } from '../operations/redeliver-cargo.js';
import type { CommandContext } from './context.js';
import { print, unwrap } from './output.js';

export function registerCargoCommands(program: Command, run: CommandContext['run']): void {
  const cargo = program.command('cargo').description('Operate on cargo');

  cargo
    .command('redeliver <cargo-id>')
    .description('Schedule a fresh delivery of a finished cargo on every channel it asked for')
    .option('--json', 'print one JSON object')
    .action((cargoId: string, opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const scheduled = unwrap(await redeliverCargo(deps, { cargoId }));
        print(
          out,
          { cargo_id: scheduled.cargoId, channels: scheduled.channels, status: scheduled.status },
          () => `Redelivery of ${cargoId} scheduled (${scheduled.channels.join(', ')})`,
        );
      }),
    );
}
