/**
 * A start on a database with no project: in development a `default` project, one API key, its
 * webhook signing secret and an all-projects admin token, shown once, so a new user can call the API and verify its webhooks right
 * away; in production a hint naming the commands that make them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from './config.js';
import type { Clock } from './domain/clock.js';
import type { Logger } from './ports.js';
import { createAdminToken } from './store/admin/admin-tokens.js';
import { createApiKey } from './store/admin/api-keys.js';
import { countProjects, createProject } from './store/admin/projects.js';
import type { Database } from './store/database.js';

/** Shows the first start's key and secret; the file they were written to, or null when shown on the terminal. */
export type Announce = (text: string) => string | null;

const toTerminal: Announce = (text) => {
  process.stdout.write(text);
  return null;
};

/**
 * Where the development key and secret of a first start go: to the terminal when one is watching,
 * and otherwise to a file only its owner may read (beside the SQLite file, or in ./data), never
 * into stdout or stderr that a log pipeline collects. The log says where they went.
 */
export function firstStartKeyAnnouncer(config: Config, options: { terminal: boolean }): Announce {
  if (options.terminal) return toTerminal;
  return (text) => {
    const sqlite = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : null;
    const dir = sqlite && sqlite !== ':memory:' ? dirname(sqlite) : './data';
    const path = join(dir, 'first-start-key.txt');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
}

/**
 * A production start with no project says, in the log (it holds no secret, and under `serve
 * --json` it is a JSON line like every other), that nothing can call the API until an operator
 * makes a project and a key, and the commands that do. Each prints its secret once.
 */
const NO_PROJECT_COMMANDS = ['npx barge project create <slug>', 'npx barge key create <slug> --name <name>'];

/** Runs once the database is migrated; does nothing when a project exists. */
export async function firstStart(
  database: Database,
  config: Config,
  clock: Clock,
  log: Logger,
  announce: Announce = toTerminal,
): Promise<void> {
  if ((await countProjects(database)) > 0) return;
  if (config.env === 'production') {
    log.warn(
      { commands: NO_PROJECT_COMMANDS },
      'no project yet (BARGE_ENV=production), so no API key works: create one, and a key for it',
    );
    return;
  }
  const now = clock.now();
  const project = await createProject(database, 'default', now, config.secretKey);
  // Another process starting on the same database made it first, and showed its key.
  if (project === 'slug_taken') return;
  const { key } = await createApiKey(database, {
    projectId: project.id,
    name: 'development',
    expiresAt: null,
    now,
  });
  // The admin API's (and the dashboard's) sign-in: every project, as decisions.md pins it.
  const { token: adminToken } = await createAdminToken(database, { name: 'development', project: null, now });
  const path = announce(
    [
      '',
      'barge: first start on an empty database (BARGE_ENV=development).',
      "Created project 'default', this API key, its webhook signing secret and an admin token (every",
      'project; Authorization: Bearer for /admin/v1/). They are shown only once:',
      '',
      `    API key:                 ${key}`,
      `    webhook signing secret:  ${project.webhookSecret}`,
      `    admin token:             ${adminToken}`,
      '',
      `Next: open the dashboard, ${config.publicBaseUrl}/dashboard, and sign in with the admin token.`,
      'The README walks through loading a svc-mock cargo with the key (POST /cargo/load), and',
      'verifying the webhooks barge signs with the secret.',
      '',
    ].join('\n'),
  );
  if (path !== null) {
    log.warn(
      { path },
      "first start: created project 'default'; its API key, webhook signing secret and an admin token are in the file (readable by you only)",
    );
  }
}
