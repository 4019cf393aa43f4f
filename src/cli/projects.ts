import type { Command } from 'commander';
import { isoTime } from '../domain/clock.js';
import { isEmailAddress } from '../domain/connections.js';
import { isValidSlug } from '../domain/projects.js';
import { PREVIOUS_SECRET_GRACE_MS } from '../domain/webhook-secret.js';
import type { Project } from '../store/projects.js';
import {
  createProject,
  listProjects,
  rotateWebhookSecret,
  setNotificationEmail,
  setProjectActive,
} from '../store/projects.js';
import type { CommandContext } from './context.js';
import { CliError, print, table } from './output.js';

export function projectJson(p: Project) {
  return {
    id: p.id,
    slug: p.slug,
    is_active: p.isActive,
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
      run(opts, async ({ db, clock, out }) => {
        if (!isValidSlug(slug)) {
          throw new CliError(
            `invalid slug '${slug}': use lowercase letters, digits and single hyphens (at most 63 characters)`,
          );
        }
        const created = await createProject(db, slug, clock.now());
        if (created === 'slug_taken') throw new CliError(`project '${slug}' already exists`);
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
      run(opts, async ({ db, out }) => {
        const projects = await listProjects(db);
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
        run(opts, async ({ db, clock, out }) => {
          const updated = await setProjectActive(db, slug, active, clock.now());
          if (!updated) throw new CliError(`no project '${slug}'`);
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
      run(opts, async ({ db, clock, out }) => {
        if ((email === undefined) === (opts.clear !== true)) throw new CliError('give an e-mail address, or --clear');
        if (email !== undefined && !isEmailAddress(email)) throw new CliError(`invalid e-mail address '${email}'`);
        if (!(await setNotificationEmail(db, slug, email ?? null, clock.now())))
          throw new CliError(`no project '${slug}'`);
        print(out, { slug, notification_email: email ?? null }, () =>
          email ? `Incident mail for ${slug} goes to ${email}` : `No incident mail for ${slug}`,
        );
      }),
    );

  project
    .command('rotate-webhook-secret <slug>')
    .description('Make a new webhook signing secret; the old one keeps signing beside it for 24 hours')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { json?: boolean }) =>
      run(opts, async ({ db, clock, out }) => {
        const rotated = await rotateWebhookSecret(db, slug, clock.now());
        if (!rotated) throw new CliError(`no project '${slug}'`);
        print(
          out,
          {
            slug,
            webhook_secret: rotated.webhookSecret,
            previous_secret_valid_until: isoTime(clock.now() + PREVIOUS_SECRET_GRACE_MS),
          },
          () =>
            `New webhook signing secret for ${slug} (the previous one also signs for 24 hours):\n\n    ${rotated.webhookSecret}\n`,
        );
      }),
    );
}
