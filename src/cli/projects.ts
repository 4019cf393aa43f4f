/** `barge project …`: create, list, activate, settings and budgets; thin adapters over src/operations/. */
import type { Command } from 'commander';
import { isoTime } from '../domain/clock.js';
import { createProject } from '../operations/create-project.js';
import { listProjects, type Project } from '../operations/list-projects.js';
import { rotateWebhookSecret } from '../operations/rotate-webhook-secret.js';
import { setNotificationEmail } from '../operations/set-notification-email.js';
import { setProjectActive } from '../operations/set-project-active.js';
import { setProjectModels } from '../operations/set-project-models.js';
import { setSpendBudget } from '../operations/set-spend-budget.js';
import { setStorageBudget } from '../operations/set-storage-budget.js';
import type { CommandContext } from './context.js';
import { CliError, print, table, unwrap } from './output.js';

export function projectJson(p: Project) {
  return {
    id: p.id,
    slug: p.slug,
    is_active: p.isActive,
    daily_byte_budget: p.dailyByteBudget,
    held_byte_budget: p.heldByteBudget,
    allowed_models: p.allowedModels,
    spend_budget: spendBudgetJson(p),
    created_at: isoTime(p.createdAt),
    updated_at: isoTime(p.updatedAt),
  };
}

/** `default`, `none`, or the project's own budgets in USD. */
function spendBudgetJson(p: Project): 'default' | 'none' | { monthly_usd: number | null; daily_usd: number | null } {
  if (p.spend.mode !== 'own') return p.spend.mode;
  return { monthly_usd: p.spend.monthlyUsd, daily_usd: p.spend.dailyUsd };
}

function spendBudgetText(p: Project): string {
  if (p.spend.mode === 'default') return 'the default (BARGE_DEFAULT_MONTHLY_BUDGET_USD)';
  if (p.spend.mode === 'none') return 'none';
  const daily = p.spend.dailyUsd === null ? '' : `, ${p.spend.dailyUsd} USD per UTC day`;
  return `${p.spend.monthlyUsd} USD per UTC month${daily}`;
}

export function registerProjectCommands(program: Command, run: CommandContext['run']): void {
  const project = program.command('project').description('Manage projects');

  project
    .command('create <slug>')
    .description('Create a project (slug: lowercase letters, digits and hyphens)')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const created = unwrap(await createProject(deps, { slug }));
        print(
          out,
          { ...projectJson(created), webhook_secret: created.webhookSecret },
          () =>
            `Created project ${created.slug} (${created.id}).\n` +
            `Webhook signing secret (shown once; rotate-webhook-secret makes a new one):\n\n    ${created.webhookSecret}\n`,
        );
      }),
    );

  project
    .command('list')
    .description('List projects')
    .option('--json', 'print one JSON object')
    .action((opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const projects = unwrap(await listProjects(deps));
        print(out, { projects: projects.map(projectJson) }, () =>
          table(
            ['SLUG', 'ID', 'ACTIVE', 'CREATED'],
            projects.map((p) => [p.slug, p.id, p.isActive ? 'yes' : 'no', isoTime(p.createdAt)]),
          ),
        );
      }),
    );

  for (const [name, active] of [
    ['deactivate', false],
    ['activate', true],
  ] as const) {
    project
      .command(`${name} <slug>`)
      .description(active ? 'Reactivate a project' : 'Deactivate a project; its keys answer 403 and no data is lost')
      .option('--json', 'print one JSON object')
      .action((slug: string, opts: { json?: boolean }) =>
        run(opts, async ({ out, ...deps }) => {
          const updated = unwrap(await setProjectActive(deps, { slug, active }));
          print(out, projectJson(updated), () => `Project ${slug} is now ${active ? 'active' : 'inactive'}`);
        }),
      );
  }

  project
    .command('set-notification-email <slug> [email]')
    .description("Where the project's incident mail goes (a delivery connection marked failed); --clear for none")
    .option('--clear', 'send no incident mail')
    .option('--json', 'print one JSON object')
    .action((slug: string, email: string | undefined, opts: { clear?: boolean; json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        if ((email === undefined) === (opts.clear !== true)) throw new CliError('give an e-mail address, or --clear');
        const set = unwrap(await setNotificationEmail(deps, { slug, email: email ?? null }));
        print(out, { slug: set.slug, notification_email: set.notificationEmail }, () =>
          set.notificationEmail
            ? `Incident mail for ${slug} goes to ${set.notificationEmail}`
            : `No incident mail for ${slug}`,
        );
      }),
    );

  project
    .command('set-storage-budget <slug>')
    .description(
      'Bytes of cargo the project may have accepted per UTC day, and bytes it may hold; `default` uses the configured default',
    )
    .option('--daily-bytes <bytes>', 'bytes accepted per UTC day, or default')
    .option('--held-bytes <bytes>', 'bytes held (requests and results not yet purged), or default')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { dailyBytes?: string; heldBytes?: string; json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        if (opts.dailyBytes === undefined && opts.heldBytes === undefined) {
          throw new CliError('give --daily-bytes, --held-bytes or both');
        }
        const updated = unwrap(
          await setStorageBudget(deps, {
            slug,
            ...(opts.dailyBytes === undefined ? {} : { dailyBytes: byteBudget(opts.dailyBytes) }),
            ...(opts.heldBytes === undefined ? {} : { heldBytes: byteBudget(opts.heldBytes) }),
          }),
        );
        const shown = (v: number | null) => (v === null ? 'the default' : `${v} bytes`);
        print(
          out,
          projectJson(updated),
          () =>
            `Storage budget of ${slug}: ${shown(updated.dailyByteBudget)} per day, ${shown(updated.heldByteBudget)} held`,
        );
      }),
    );

  project
    .command('set-models <slug>')
    .description('The models the project may use: globs against catalog ids (e.g. claude-*,svc-mock), or --all')
    .option('--allow <patterns>', 'comma-separated globs (* and ?), matched against the catalog id')
    .option('--all', 'every model the deployment serves (the default)')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { allow?: string; all?: boolean; json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        if ((opts.allow === undefined) === (opts.all !== true)) throw new CliError('give --allow <patterns> or --all');
        const allow = opts.allow === undefined ? null : opts.allow.split(',').map((p) => p.trim());
        const updated = unwrap(await setProjectModels(deps, { slug, allow }));
        print(out, projectJson(updated), () =>
          updated.allowedModels === null
            ? `Project ${slug} may use every model`
            : `Project ${slug} may use: ${updated.allowedModels.join(', ')}`,
        );
      }),
    );

  project
    .command('set-budget <slug>')
    .description('Spend budget in USD per UTC calendar month (and day); --none for none, --default for the default')
    .option('--monthly-usd <usd>', 'budget per UTC calendar month')
    .option('--daily-usd <usd>', 'budget per UTC day (with --monthly-usd)')
    .option('--none', 'no budget, even when BARGE_DEFAULT_MONTHLY_BUDGET_USD is set')
    .option('--default', 'back to BARGE_DEFAULT_MONTHLY_BUDGET_USD (the initial state)')
    .option('--json', 'print one JSON object')
    .action(
      (
        slug: string,
        opts: { monthlyUsd?: string; dailyUsd?: string; none?: boolean; default?: boolean; json?: boolean },
      ) =>
        run(opts, async ({ out, ...deps }) => {
          const chosen = [opts.monthlyUsd !== undefined, opts.none === true, opts.default === true].filter(Boolean);
          if (chosen.length !== 1) throw new CliError('give one of --monthly-usd <usd>, --none or --default');
          if (opts.dailyUsd !== undefined && opts.monthlyUsd === undefined) {
            throw new CliError('--daily-usd goes with --monthly-usd');
          }
          const updated = unwrap(
            await setSpendBudget(
              deps,
              opts.monthlyUsd !== undefined
                ? {
                    slug,
                    mode: 'own',
                    monthlyUsd: usd('--monthly-usd', opts.monthlyUsd),
                    dailyUsd: opts.dailyUsd === undefined ? null : usd('--daily-usd', opts.dailyUsd),
                  }
                : { slug, mode: opts.none ? 'none' : 'default' },
            ),
          );
          print(out, projectJson(updated), () => `Spend budget of ${slug}: ${spendBudgetText(updated)}`);
        }),
    );

  project
    .command('rotate-webhook-secret <slug>')
    .description('Make a new webhook signing secret; the old one keeps signing beside it for 24 hours')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const rotated = unwrap(await rotateWebhookSecret(deps, { slug }));
        print(
          out,
          {
            slug,
            webhook_secret: rotated.webhookSecret,
            previous_secret_valid_until: isoTime(rotated.previousSecretValidUntil),
          },
          () =>
            `New webhook signing secret for ${slug} (the previous one also signs for 24 hours):\n\n    ${rotated.webhookSecret}\n`,
        );
      }),
    );
}

/** An amount of US dollars as given on the command line. */
function usd(flag: string, raw: string): number {
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new CliError(`invalid ${flag} '${raw}': use US dollars, e.g. 250 or 12.5`);
  return Number(raw);
}

/** `default` (null) or a whole number of bytes. */
function byteBudget(raw: string): number | null {
  if (raw === 'default') return null;
  if (!/^\d+$/.test(raw)) throw new CliError(`invalid byte budget '${raw}': use a whole number of bytes, or default`);
  return Number(raw);
}
