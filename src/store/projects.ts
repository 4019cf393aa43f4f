import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
import { generateWebhookSecret, PREVIOUS_SECRET_GRACE_MS } from '../domain/webhook-secret.js';
import { bumpAuthChanges } from './auth-changes.js';
import type { ProjectsTable, Schema } from './schema.js';

export interface Project {
  id: string;
  slug: string;
  isActive: boolean;
  rateLimitMax: number | null;
  createdAt: number;
  updatedAt: number;
}

function toProject(row: ProjectsTable): Project {
  return {
    id: row.id,
    slug: row.slug,
    isActive: row.is_active === 1,
    rateLimitMax: row.rate_limit_max,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Creates a project with its webhook signing secret, returned this once with it. */
export async function createProject(
  db: Kysely<Schema>,
  slug: string,
  now: number,
): Promise<(Project & { webhookSecret: string }) | 'slug_taken'> {
  const row: ProjectsTable = {
    id: newId('prj', now),
    slug,
    is_active: 1,
    rate_limit_max: null,
    created_at: now,
    updated_at: now,
    webhook_secret: generateWebhookSecret(),
    previous_webhook_secret: null,
    previous_webhook_secret_until: null,
    notification_email: null,
  };
  // ON CONFLICT DO NOTHING turns a duplicate slug (even one racing in from another process) into
  // an empty result instead of an exception.
  const inserted = await db
    .insertInto('projects')
    .values(row)
    .onConflict((oc) => oc.column('slug').doNothing())
    .returningAll()
    .executeTakeFirst();
  return inserted ? { ...toProject(inserted), webhookSecret: row.webhook_secret as string } : 'slug_taken';
}

export async function findProjectBySlug(db: Kysely<Schema>, slug: string): Promise<Project | undefined> {
  const row = await db.selectFrom('projects').selectAll().where('slug', '=', slug).executeTakeFirst();
  return row && toProject(row);
}

export async function listProjects(db: Kysely<Schema>): Promise<Project[]> {
  const rows = await db.selectFrom('projects').selectAll().orderBy('slug').execute();
  return rows.map(toProject);
}

export async function countProjects(db: Kysely<Schema>): Promise<number> {
  const row = await db
    .selectFrom('projects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setProjectActive(
  db: Kysely<Schema>,
  slug: string,
  active: boolean,
  now: number,
): Promise<Project | undefined> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('projects')
      .set({ is_active: active ? 1 : 0, updated_at: now })
      .where('slug', '=', slug)
      .returningAll()
      .executeTakeFirst();
    if (row) await bumpAuthChanges(tx);
    return row && toProject(row);
  });
}

/** `null` returns the project to the configured default limit. */
export async function setProjectRateLimit(
  db: Kysely<Schema>,
  slug: string,
  max: number | null,
  now: number,
): Promise<Project | undefined> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('projects')
      .set({ rate_limit_max: max, updated_at: now })
      .where('slug', '=', slug)
      .returningAll()
      .executeTakeFirst();
    if (row) await bumpAuthChanges(tx);
    return row && toProject(row);
  });
}

/**
 * Replaces a project's webhook signing secret. The old one keeps signing beside the new one for
 * PREVIOUS_SECRET_GRACE_MS, so receivers verifying with either succeed while they switch.
 */
export async function rotateWebhookSecret(
  db: Kysely<Schema>,
  slug: string,
  now: number,
): Promise<{ project: Project; webhookSecret: string } | undefined> {
  const secret = generateWebhookSecret();
  const row = await db
    .updateTable('projects')
    .set((eb) => ({
      webhook_secret: secret,
      previous_webhook_secret: eb.ref('webhook_secret'),
      previous_webhook_secret_until: now + PREVIOUS_SECRET_GRACE_MS,
      updated_at: now,
    }))
    .where('slug', '=', slug)
    .returningAll()
    .executeTakeFirst();
  return row && { project: toProject(row), webhookSecret: secret };
}

/** Sets (or with null, clears) where the project's incident mail goes; false when no such project. */
export async function setNotificationEmail(
  db: Kysely<Schema>,
  slug: string,
  email: string | null,
  now: number,
): Promise<boolean> {
  const row = await db
    .updateTable('projects')
    .set({ notification_email: email, updated_at: now })
    .where('slug', '=', slug)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
