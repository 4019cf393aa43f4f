import type { Command } from 'commander';
import { isoTime } from '../domain/clock.js';
import type { ApiKey } from '../store/api-keys.js';
import { createApiKey, deactivateApiKey, listApiKeys } from '../store/api-keys.js';
import { findProjectBySlug } from '../store/projects.js';
import type { CommandContext } from './context.js';
import { CliError, print, table } from './output.js';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function parseExpiry(raw: string, now: number): number {
  const ms = ISO_8601.test(raw) && isCalendarDate(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms))
    throw new CliError(`invalid --expires-at '${raw}': use an ISO 8601 date, e.g. 2027-01-31T00:00:00Z`);
  if (ms <= now) throw new CliError(`invalid --expires-at '${raw}': it is not in the future`);
  return ms;
}

/** Date.parse rolls 2027-02-30 over to March 2 instead of refusing it. */
function isCalendarDate(raw: string): boolean {
  const [year, month, day] = raw.slice(0, 10).split('-').map(Number) as [number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const maybeIso = (ms: number | null) => (ms === null ? null : isoTime(ms));

function keyJson(k: ApiKey, slug: string) {
  return {
    id: k.id,
    key_prefix: k.keyPrefix,
    name: k.name,
    project: slug,
    is_active: k.isActive,
    expires_at: maybeIso(k.expiresAt),
    last_used_at: maybeIso(k.lastUsedAt),
    created_at: isoTime(k.createdAt),
  };
}

export function registerKeyCommands(program: Command, run: CommandContext['run']): void {
  const key = program.command('key').description('Manage API keys');

  key
    .command('create <slug>')
    .description('Create an API key for a project; the full key is printed once')
    .requiredOption('--name <name>', 'a label for the key')
    .option('--expires-at <iso8601>', 'when the key stops working')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { name: string; expiresAt?: string; json?: boolean }) =>
      run(opts, async ({ db, clock, out }) => {
        const now = clock.now();
        if (opts.name.trim() === '') throw new CliError('--name must not be empty');
        const expiresAt = opts.expiresAt === undefined ? null : parseExpiry(opts.expiresAt, now);
        const project = await findProjectBySlug(db, slug);
        if (!project) throw new CliError(`no project '${slug}'`);
        const { apiKey, key: fullKey } = await createApiKey(db, {
          projectId: project.id,
          name: opts.name,
          expiresAt,
          now,
        });
        print(
          out,
          {
            id: apiKey.id,
            key: fullKey,
            key_prefix: apiKey.keyPrefix,
            name: apiKey.name,
            project: slug,
            expires_at: maybeIso(apiKey.expiresAt),
            created_at: isoTime(apiKey.createdAt),
          },
          () => `Created key ${apiKey.id} for ${slug}. It is shown only once:\n\n    ${fullKey}\n`,
        );
      }),
    );

  key
    .command('list <slug>')
    .description("List a project's keys (never the keys themselves)")
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { json?: boolean }) =>
      run(opts, async ({ db, out }) => {
        const project = await findProjectBySlug(db, slug);
        if (!project) throw new CliError(`no project '${slug}'`);
        const keys = await listApiKeys(db, project.id);
        print(out, { keys: keys.map((k) => keyJson(k, slug)) }, () =>
          table(
            ['ID', 'NAME', 'PREFIX', 'ACTIVE', 'EXPIRES', 'LAST USED'],
            keys.map((k) => [
              k.id,
              k.name,
              k.keyPrefix,
              k.isActive ? 'yes' : 'no',
              maybeIso(k.expiresAt) ?? '-',
              maybeIso(k.lastUsedAt) ?? '-',
            ]),
          ),
        );
      }),
    );

  key
    .command('deactivate <key-id>')
    .description('Deactivate a key (it is kept, and answers 401 from now on)')
    .option('--json', 'print one JSON object')
    .action((keyId: string, opts: { json?: boolean }) =>
      run(opts, async ({ db, out }) => {
        const updated = await deactivateApiKey(db, keyId);
        if (!updated) throw new CliError(`no key '${keyId}'`);
        print(out, { id: updated.id, is_active: false }, () => `Key ${updated.id} is deactivated`);
      }),
    );
}
