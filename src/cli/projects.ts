/** `barge project …`: create, list, activate, settings and budgets; thin adapters over src/operations/. */
import type { Command } from 'commander';
import { isoTime } from '../domain/clock.js';
import { createProject } from '../operations/create-project.js';
import { listProjects } from '../operations/list-projects.js';
import { rotateWebhookSecret } from '../operations/rotate-webhook-secret.js';
import { setNotificationEmail } from '../operations/set-notification-email.js';
import { setProjectActive } from '../operations/set-project-active.js';
import { setStorageBudget } from '../operations/set-storage-budget.js';
import type { Project } from '../store/admin/projects.js';
import type { CommandContext } from './context.js';
import { CliError, print, table, unwrap } from './output.js';

export function projectJson(p: Project) {
  return {
    id: p.id,
    slug: p.slug,
    is_active: p.isActive,
    daily_byte_budget: p.dailyByteBudget,
    held_byte_budget: p.heldByteBudget,
    created_at: isoTime(p.createdAt),
    updated_at: isoTime(p.updatedAt),
  };
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

/** `default` (null) or a whole number of bytes. */
function byteBudget(raw: string): number | null {
  if (raw === 'default') return null;
  if (!/^\d+$/.test(raw)) throw new CliError(`invalid byte budget '${raw}': use a whole number of bytes, or default`);
  return Number(raw);
}
