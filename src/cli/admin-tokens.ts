/** `barge admin-token …`: create, list and revoke the admin API's tokens; thin adapters over src/operations/. */
import type { Command } from 'commander';
import { isoTime } from '../domain/clock.js';
import { createAdminToken } from '../operations/create-admin-token.js';
import { type AdminToken, listAdminTokens } from '../operations/list-admin-tokens.js';
import { revokeAdminToken } from '../operations/revoke-admin-token.js';
import type { CommandContext } from './context.js';
import { print, table, unwrap } from './output.js';

const maybeIso = (ms: number | null) => (ms === null ? null : isoTime(ms));

export function adminTokenJson(t: AdminToken) {
  return {
    id: t.id,
    name: t.name,
    token_prefix: t.tokenPrefix,
    /** The one project the token sees; null: every project. */
    project: t.project?.slug ?? null,
    is_revoked: t.revokedAt !== null,
    revoked_at: maybeIso(t.revokedAt),
    last_used_at: maybeIso(t.lastUsedAt),
    created_at: isoTime(t.createdAt),
  };
}

export function registerAdminTokenCommands(program: Command, run: CommandContext['run']): void {
  const adminToken = program.command('admin-token').description('Manage the admin API tokens');

  adminToken
    .command('create')
    .description('Create an admin token (every project, or one with --project); the full token is printed once')
    .requiredOption('--name <name>', 'a label for the token')
    .option('--project <slug>', 'the one project the token sees and changes')
    .option('--json', 'print one JSON object')
    .action((opts: { name: string; project?: string; json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const { adminToken: created, token } = unwrap(
          await createAdminToken(deps, { name: opts.name, slug: opts.project }),
          { slug: '--project' },
        );
        const scope = created.project ? `project ${created.project.slug}` : 'every project';
        print(
          out,
          { ...adminTokenJson(created), token },
          () => `Created admin token ${created.id} for ${scope}. It is shown only once:\n\n    ${token}\n`,
        );
      }),
    );

  adminToken
    .command('list')
    .description('List the admin tokens (never the tokens themselves)')
    .option('--json', 'print one JSON object')
    .action((opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const tokens = unwrap(await listAdminTokens(deps));
        print(out, { admin_tokens: tokens.map(adminTokenJson) }, () =>
          table(
            ['ID', 'NAME', 'PREFIX', 'PROJECT', 'REVOKED', 'LAST USED'],
            tokens.map((t) => [
              t.id,
              t.name,
              t.tokenPrefix,
              t.project?.slug ?? '(all)',
              maybeIso(t.revokedAt) ?? 'no',
              maybeIso(t.lastUsedAt) ?? '-',
            ]),
          ),
        );
      }),
    );

  adminToken
    .command('revoke <id>')
    .description('Revoke an admin token (it is kept, and refused from the next request on)')
    .option('--json', 'print one JSON object')
    .action((id: string, opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const revoked = unwrap(await revokeAdminToken(deps, { id }));
        print(out, adminTokenJson(revoked), () => `Admin token ${revoked.id} is revoked`);
      }),
    );
}
