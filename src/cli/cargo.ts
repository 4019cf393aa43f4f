/**
 * `barge cargo …`: the CLI's cargo commands, thin adapters over src/operations/: redeliver one
 * cargo, or (with --project) every failed delivery of a project in a time window, a bulk recovery
 * the same as the admin API's, which this command works through to its end beside the service's
 * workers.
 */
import type { Command } from 'commander';
import { countRecovery } from '../operations/count-recovery.js';
import { createRecovery } from '../operations/create-recovery.js';
import { recoveryCountView, recoveryView } from '../operations/recovery-view.js';
import { redeliverCargo } from '../operations/redeliver-cargo.js';
import { showRecovery } from '../operations/show-recovery.js';
import { workRecovery } from '../operations/work-recovery.js';
import type { CommandContext, CommandDeps } from './context.js';
import { print, unwrap } from './output.js';

interface RedeliverOptions {
  project?: string;
  status?: string;
  since?: string;
  until?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** The recovery's inputs by their flags. */
const RECOVERY_FLAGS = { status: '--status', since: '--since', until: '--until' };
/** How long to wait before trying again for a recovery another worker holds. */
const HELD_ELSEWHERE_MS = 250;

export function registerCargoCommands(program: Command, run: CommandContext['run']): void {
  const cargo = program.command('cargo').description('Operate on cargo');

  cargo
    .command('redeliver [cargo-id]')
    .description(
      'Schedule a fresh delivery of a finished cargo on every channel it asked for; or, with --project and --since, redeliver every callback_failed cargo of the project created in the window (a bulk recovery; --dry-run counts them)',
    )
    .option('--project <slug>', 'bulk recovery: the project')
    .option(
      '--status <status>',
      'bulk recovery: the cargo to redeliver, callback_failed (default) or callback_delivered',
    )
    .option(
      '--since <time>',
      'bulk recovery: cargo created at or after this ISO 8601 time (UTC unless it names a zone)',
    )
    .option('--until <time>', 'bulk recovery: cargo created before this time (default: now)')
    .option('--dry-run', 'bulk recovery: only count the cargo it would redeliver')
    .option('--json', 'print one JSON object')
    .action((cargoId: string | undefined, opts: RedeliverOptions, command: Command) => {
      const bulk = [opts.project, opts.status, opts.since, opts.until, opts.dryRun].some((v) => v !== undefined);
      if (cargoId !== undefined && bulk) {
        command.error('error: give a cargo id, or --project with --since (a bulk recovery), not both');
      }
      if (cargoId === undefined && (opts.project === undefined || opts.since === undefined)) {
        command.error('error: give a cargo id, or --project <slug> and --since <time>');
      }
      return run(opts, (deps) =>
        cargoId !== undefined ? redeliverOne(deps, cargoId) : recover(deps, opts as RecoverOptions),
      );
    });
}

async function redeliverOne({ out, ...deps }: CommandDeps, cargoId: string): Promise<void> {
  const scheduled = unwrap(await redeliverCargo(deps, { cargoId }));
  print(
    out,
    { cargo_id: scheduled.cargoId, channels: scheduled.channels, status: scheduled.status },
    () => `Redelivery of ${cargoId} scheduled (${scheduled.channels.join(', ')})`,
  );
}

type RecoverOptions = RedeliverOptions & { project: string; since: string };

/**
 * Counts (--dry-run), or makes the recovery and works it through, turn after turn, as a worker
 * does (operations/work-recovery.ts): a turn the service's worker holds is waited out, and if this
 * command is stopped midway, a worker goes on from its last chunk.
 */
async function recover({ out, ...deps }: CommandDeps, opts: RecoverOptions): Promise<void> {
  const request = { slug: opts.project, status: opts.status, since: opts.since, until: opts.until };
  if (opts.dryRun) {
    const counted = recoveryCountView(unwrap(await countRecovery(deps, request), RECOVERY_FLAGS));
    print(
      out,
      { project: opts.project, ...counted },
      () =>
        `${counted.count} ${counted.status} cargo of ${opts.project} created from ${counted.since} to ${counted.until} would be redelivered`,
    );
    return;
  }
  let recovery = unwrap(await createRecovery(deps, request), RECOVERY_FLAGS);
  const workerId = `cli-${process.pid}-${recovery.id}`;
  while (recovery.status === 'running') {
    const turn = await workRecovery(deps, { workerId, leaseMs: deps.config.pipeline.leaseMs, recoveryId: recovery.id });
    if (turn.recoveryId === null) await new Promise((resolve) => setTimeout(resolve, HELD_ELSEWHERE_MS));
    recovery = unwrap(await showRecovery(deps, { slug: opts.project, recoveryId: recovery.id }));
  }
  const view = recoveryView(recovery, opts.project);
  print(
    out,
    view,
    () =>
      `Recovery ${view.id} ${view.state}: ${view.redelivered} of ${view.total} ${view.status} cargo of ${view.project} redelivered (created from ${view.since} to ${view.until})`,
  );
}
