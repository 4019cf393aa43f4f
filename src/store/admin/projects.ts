/** Projects: create, list, activate, settings, webhook secrets and notification mail. */
import type { Insertable, Selectable, Updateable } from 'kysely';
import { newId } from '../../domain/ids.js';
import type { SpendSetting } from '../../domain/spend.js';
import {
  generateWebhookSecret,
  isPlaintextWebhookSecret,
  PREVIOUS_SECRET_GRACE_MS,
  storedWebhookSecret,
} from '../../domain/webhook-secret.js';
import { bumpAuthChanges } from '../auth-changes.js';
import type { Database } from '../database.js';
import type { ProjectsTable } from '../schema.js';

export interface Project {
  id: string;
  slug: string;
  isActive: boolean;
  rateLimitMax: number | null;
  /** Where incident mail goes; null: none is sent. */
  notificationEmail: string | null;
  /** The project's storage budget (bytes accepted per UTC day, bytes held); null: the configured default. */
  dailyByteBudget: number | null;
  heldByteBudget: number | null;
  /** The model globs the project may use; null: every model (migration 019). */
  allowedModels: string[] | null;
  /** The project's spend budget setting (domain/spend.ts). */
  spend: SpendSetting;
  createdAt: number;
  updatedAt: number;
}

/** The stored allowlist (JSON array of globs), or null for every model. */
export function parseAllowedModels(stored: string | null | undefined): string[] | null {
  // undefined: a row read before migration 019 (the upgrade tests).
  return stored == null ? null : (JSON.parse(stored) as string[]);
}

export function spendSettingOf(row: {
  budget_mode: string;
  monthly_budget_usd: number | null;
  daily_budget_usd: number | null;
}): SpendSetting {
  return {
    mode: row.budget_mode === 'none' || row.budget_mode === 'own' ? row.budget_mode : 'default',
    monthlyUsd: row.monthly_budget_usd == null ? null : Number(row.monthly_budget_usd),
    dailyUsd: row.daily_budget_usd == null ? null : Number(row.daily_budget_usd),
  };
}

function toProject(row: Selectable<ProjectsTable>): Project {
  return {
    id: row.id,
    slug: row.slug,
    isActive: row.is_active === 1,
    rateLimitMax: row.rate_limit_max,
    notificationEmail: row.notification_email,
    dailyByteBudget: row.daily_byte_budget === null ? null : Number(row.daily_byte_budget),
    heldByteBudget: row.held_byte_budget === null ? null : Number(row.held_byte_budget),
    allowedModels: parseAllowedModels(row.allowed_models),
    spend: spendSettingOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Creates a project with its webhook signing secret, returned this once with it; stored sealed
 * when `secretKey` (BARGE_SECRET_KEY) is given.
 */
export async function createProject(
  database: Database,
  slug: string,
  now: number,
  secretKey: Buffer | null = null,
): Promise<(Project & { webhookSecret: string }) | 'slug_taken'> {
  const id = newId('prj', now);
  const secret = generateWebhookSecret();
  const row: Insertable<ProjectsTable> = {
    id,
    slug,
    is_active: 1,
    rate_limit_max: null,
    created_at: now,
    updated_at: now,
    webhook_secret: storedWebhookSecret(secret, secretKey, id),
    previous_webhook_secret: null,
    previous_webhook_secret_until: null,
    notification_email: null,
    daily_byte_budget: null,
    held_byte_budget: null,
    // The model policy and spend budget columns (migration 019) keep their defaults (every model,
    // the default budget): left out, so the upgrade tests can create projects on older schemas.
  };
  // ON CONFLICT DO NOTHING turns a duplicate slug (even one racing in from another process) into
  // an empty result instead of an exception.
  const inserted = await database.write
    .insertInto('projects')
    .values(row)
    .onConflict((oc) => oc.column('slug').doNothing())
    .returningAll()
    .executeTakeFirst();
  return inserted ? { ...toProject(inserted), webhookSecret: secret } : 'slug_taken';
}

export async function findProjectBySlug(database: Database, slug: string): Promise<Project | undefined> {
  const row = await database.read.selectFrom('projects').selectAll().where('slug', '=', slug).executeTakeFirst();
  return row && toProject(row);
}

export async function findProjectById(database: Database, id: string): Promise<Project | undefined> {
  const row = await database.read.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toProject(row);
}

export async function listProjects(database: Database): Promise<Project[]> {
  const rows = await database.read.selectFrom('projects').selectAll().orderBy('slug').execute();
  return rows.map(toProject);
}

export async function countProjects(database: Database): Promise<number> {
  const row = await database.read
    .selectFrom('projects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Changes a project's settings by slug, and bumps the auth change counter in the same transaction,
 * so every API process sees the change on its next request. Undefined when no project has the slug.
 */
async function updateProject(
  database: Database,
  slug: string,
  values: Updateable<ProjectsTable>,
): Promise<Project | undefined> {
  return database.write.transaction().execute(async (tx) => {
    const row = await tx.updateTable('projects').set(values).where('slug', '=', slug).returningAll().executeTakeFirst();
    if (row) await bumpAuthChanges(tx);
    return row && toProject(row);
  });
}

export async function setProjectActive(
  database: Database,
  slug: string,
  active: boolean,
  now: number,
): Promise<Project | undefined> {
  return updateProject(database, slug, { is_active: active ? 1 : 0, updated_at: now });
}

/**
 * A project's settings that may change together (the admin API's PATCH) or one at a time (the
 * CLI). A field left out stays as it is; null returns a limit to the configured default, clears
 * the e-mail, or allows every model.
 */
export interface ProjectSettings {
  notificationEmail?: string | null;
  rateLimitMax?: number | null;
  storageBudget?: { dailyBytes?: number | null; heldBytes?: number | null };
  allowedModels?: string[] | null;
  spend?: SpendSetting;
}

/**
 * Changes the given settings in one transaction, with the auth change counter: every API process
 * applies them from the project's next request. Undefined when no project has the slug.
 */
export async function changeProjectSettings(
  database: Database,
  slug: string,
  settings: ProjectSettings,
  now: number,
): Promise<Project | undefined> {
  const { notificationEmail, rateLimitMax, storageBudget, allowedModels, spend } = settings;
  return updateProject(database, slug, {
    updated_at: now,
    ...(notificationEmail === undefined ? {} : { notification_email: notificationEmail }),
    ...(rateLimitMax === undefined ? {} : { rate_limit_max: rateLimitMax }),
    ...(storageBudget?.dailyBytes === undefined ? {} : { daily_byte_budget: storageBudget.dailyBytes }),
    ...(storageBudget?.heldBytes === undefined ? {} : { held_byte_budget: storageBudget.heldBytes }),
    ...(allowedModels === undefined
      ? {}
      : { allowed_models: allowedModels === null ? null : JSON.stringify(allowedModels) }),
    ...(spend === undefined
      ? {}
      : { budget_mode: spend.mode, monthly_budget_usd: spend.monthlyUsd, daily_budget_usd: spend.dailyUsd }),
  });
}

/** How many cargo each project has, by status: one grouped read over the given projects. */
export async function countCargoByStatus(
  database: Database,
  projectIds: string[],
): Promise<Map<string, Record<string, number>>> {
  const counts = new Map<string, Record<string, number>>();
  if (projectIds.length === 0) return counts;
  const rows = await database.read
    .selectFrom('cargo')
    .select((eb) => ['project_id', 'status', eb.fn.countAll<number>().as('n')])
    .where('project_id', 'in', projectIds)
    .groupBy(['project_id', 'status'])
    .execute();
  for (const row of rows) {
    const byStatus = counts.get(row.project_id) ?? {};
    byStatus[row.status] = Number(row.n);
    counts.set(row.project_id, byStatus);
  }
  return counts;
}

/**
 * Replaces a project's webhook signing secret (sealed when `secretKey` is given). The old one keeps
 * signing beside the new one for PREVIOUS_SECRET_GRACE_MS, so receivers verifying with either
 * succeed while they switch; it moves to the previous column as stored (sealed or not).
 */
export async function rotateWebhookSecret(
  database: Database,
  slug: string,
  now: number,
  secretKey: Buffer | null = null,
): Promise<{ project: Project; webhookSecret: string } | undefined> {
  const secret = generateWebhookSecret();
  return database.write.transaction().execute(async (tx) => {
    // The id first: a sealed secret is bound to it.
    const found = await tx.selectFrom('projects').select('id').where('slug', '=', slug).executeTakeFirst();
    if (!found) return undefined;
    const row = await tx
      .updateTable('projects')
      .set((eb) => ({
        webhook_secret: storedWebhookSecret(secret, secretKey, found.id),
        previous_webhook_secret: eb.ref('webhook_secret'),
        previous_webhook_secret_until: now + PREVIOUS_SECRET_GRACE_MS,
        updated_at: now,
      }))
      .where('id', '=', found.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { project: toProject(row), webhookSecret: secret };
  });
}

/**
 * Seals every webhook signing secret still stored in plaintext (current and previous), a chunk at
 * a time; returns how many projects it sealed. Run at every start with BARGE_SECRET_KEY set, so an
 * operator who adds the key later gets the existing secrets sealed by the next start (or `barge
 * migrate`). Each update is conditional on the values it read, so processes starting together
 * seal each secret once.
 */
export async function sealPlaintextWebhookSecrets(database: Database, secretKey: Buffer): Promise<number> {
  // Its reads go to the write connection too, as they did when callers passed it: each chunk's
  // read follows the updates of the chunk before, and a start-up step gains nothing from the
  // main connection.
  const db = database.write;
  let sealed = 0;
  for (;;) {
    const rows = await db
      .selectFrom('projects')
      .select(['id', 'webhook_secret', 'previous_webhook_secret'])
      // A sealed value starts with its version (`v1:`), never with `whsec`.
      .where((eb) => eb.or([eb('webhook_secret', 'like', 'whsec%'), eb('previous_webhook_secret', 'like', 'whsec%')]))
      .orderBy('id')
      .limit(SEAL_CHUNK)
      .execute();
    let changed = 0;
    for (const row of rows) {
      const seal = (stored: string | null) =>
        stored !== null && isPlaintextWebhookSecret(stored) ? storedWebhookSecret(stored, secretKey, row.id) : stored;
      const result = await db
        .updateTable('projects')
        .set({ webhook_secret: seal(row.webhook_secret), previous_webhook_secret: seal(row.previous_webhook_secret) })
        .where('id', '=', row.id)
        .where((eb) =>
          eb.and([
            row.webhook_secret === null
              ? eb('webhook_secret', 'is', null)
              : eb('webhook_secret', '=', row.webhook_secret),
            row.previous_webhook_secret === null
              ? eb('previous_webhook_secret', 'is', null)
              : eb('previous_webhook_secret', '=', row.previous_webhook_secret),
          ]),
        )
        .executeTakeFirst();
      changed += Number(result.numUpdatedRows);
    }
    sealed += changed;
    // Another process sealing the same rows meanwhile: what is left is theirs (or the next start's).
    if (rows.length < SEAL_CHUNK || changed === 0) return sealed;
  }
}

const SEAL_CHUNK = 500;
