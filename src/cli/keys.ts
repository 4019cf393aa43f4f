/** `barge key …`: create, list and deactivate API keys; thin adapters over src/operations/. */
import type { Command } from 'commander';
import { isoTime } from '../domain/clock.js';
import { createApiKey } from '../operations/create-api-key.js';
import { deactivateApiKey } from '../operations/deactivate-api-key.js';
import { type ApiKey, listApiKeys } from '../operations/list-api-keys.js';
import type { CommandContext } from './context.js';
import { print, table, unwrap } from './output.js';

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
    .option('--expires-at <iso8601>', 'when the key stops working (UTC unless it names a zone)')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { name: string; expiresAt?: string; json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const { apiKey, key: fullKey } = unwrap(
          await createApiKey(deps, { slug, name: opts.name, expiresAt: opts.expiresAt }),
          { expiresAt: '--expires-at' },
        );
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
      run(opts, async ({ out, ...deps }) => {
        const { keys } = unwrap(await listApiKeys(deps, { slug }));
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
      run(opts, async ({ out, ...deps }) => {
        const updated = unwrap(await deactivateApiKey(deps, { keyId }));
        print(out, { id: updated.id, is_active: false }, () => `Key ${updated.id} is deactivated`);
      }),
    );
}
