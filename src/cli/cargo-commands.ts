/** `barge wait`, `cancel`, `list` and `tail`: a project's cargo over HTTP through the typed client. */
import { type Command, InvalidArgumentError } from 'commander';
import type { CargoStatus, ListFilters, Tracking } from '../client/types.js';
import { EXIT, missingCargo, parsePositive, runClient, withClientOptions } from './client-context.js';
import { print, table } from './output.js';

/** tail: how often it asks, and how many of the newest cargo it watches. */
const TAIL_INTERVAL_MS = 2000;
const TAIL_WINDOW = 1000;
/** Lines shown when tail starts: the newest few, as `tail` shows, then every change. */
const TAIL_START_LINES = 10;

interface Common {
  url?: string;
  key?: string;
  json?: boolean;
}

export function registerCargoClientCommands(program: Command): void {
  const wait = withClientOptions(
    program.command('wait <cargo-id...>').description('Wait for each cargo to have a result, and print its status'),
  );
  wait.action((ids: string[], opts: Common) =>
    runClient(wait, opts, async ({ barge, out }) => {
      const finished = await Promise.all(
        ids.map(async (id) => {
          try {
            const result = await barge.waitForResult(id);
            const { status } = await barge.tracking(id);
            return { cargo_id: id, status, success: result.success, error_message: result.error_message };
          } catch (err) {
            const missing = missingCargo(err);
            if (missing === null) throw err;
            return { cargo_id: id, success: false, ...missing };
          }
        }),
      );
      print(out, { data: finished }, () => finished.map((f) => `${f.cargo_id}  ${f.status}`).join('\n'));
      if (finished.some((f) => !f.success)) process.exitCode = EXIT.failed;
    }),
  );

  const cancel = withClientOptions(
    program.command('cancel <cargo-id>').description('Cancel a cargo that is still pending or batched'),
  );
  cancel.action((id: string, opts: Common) =>
    runClient(cancel, opts, async ({ barge, out }) => {
      const tracking = await barge.cancel(id);
      print(out, tracking, () => `${tracking.cargo_id}  ${tracking.status}`);
    }),
  );

  const list = withClientOptions(
    program
      .command('list')
      .description("The project's cargo, newest first")
      .option('--status <status>', 'only cargo in this status')
      .option('--model <id>', 'only cargo of this model')
      .option('--limit <n>', 'show at most this many', parsePositive, 100),
  );
  list.action((opts: Common & { status?: CargoStatus; model?: string; limit: number }) =>
    runClient(list, opts, async ({ barge, out }) => {
      const data: Tracking[] = [];
      const filters: ListFilters = { status: opts.status, model: opts.model, limit: Math.min(opts.limit, 1000) };
      for await (const cargo of barge.list(filters)) {
        data.push(cargo);
        if (data.length >= opts.limit) break;
      }
      print(out, { data }, () =>
        table(
          ['CARGO', 'STATUS', 'CREATED', 'UPDATED'],
          data.map((c) => [c.cargo_id, c.status, c.created_at, c.updated_at]),
        ),
      );
    }),
  );

  const tail = withClientOptions(
    program
      .command('tail')
      .description(`Follow the newest ${TAIL_WINDOW} cargo as they change, one line per change, until Ctrl-C`)
      .option('--status <status>', 'only changes into this status')
      .option('--interval <ms>', 'how often to ask', parseInterval, TAIL_INTERVAL_MS),
  );
  tail.action((opts: Common & { status?: CargoStatus; interval: number }) =>
    runClient(tail, opts, async ({ barge, out }) => {
      const seen = new Map<string, string>();
      process.once('SIGINT', () => process.exit(0));
      for (let first = true; ; first = false) {
        const page = await barge.listPage({ status: opts.status, limit: TAIL_WINDOW });
        const current = new Map<string, string>();
        // Oldest first, so the lines read in the order things happened; at the start, as `tail`
        // does, only the newest few, not the whole window.
        const oldestFirst = [...page.data].reverse();
        const shownFrom = first ? Math.max(0, oldestFirst.length - TAIL_START_LINES) : 0;
        for (const [i, cargo] of oldestFirst.entries()) {
          current.set(cargo.cargo_id, cargo.status);
          if (i < shownFrom || seen.get(cargo.cargo_id) === cargo.status) continue;
          const line = { cargo_id: cargo.cargo_id, status: cargo.status, updated_at: cargo.updated_at };
          process.stdout.write(
            out.json ? `${JSON.stringify(line)}\n` : `${cargo.updated_at}  ${cargo.cargo_id}  ${cargo.status}\n`,
          );
        }
        seen.clear();
        for (const [id, status] of current) seen.set(id, status);
        await new Promise((resolve) => setTimeout(resolve, opts.interval));
      }
    }),
  );
}

function parseInterval(value: string): number {
  const ms = Number(value);
  if (!/^\d+$/.test(value) || ms < 100) throw new InvalidArgumentError('must be at least 100 (milliseconds)');
  return ms;
}
