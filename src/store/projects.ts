import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
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

export async function createProject(db: Kysely<Schema>, slug: string, now: number): Promise<Project | 'slug_taken'> {
  const row: ProjectsTable = {
    id: newId('prj', now),
    slug,
    is_active: 1,
    rate_limit_max: null,
    created_at: now,
    updated_at: now,
  };
  // ON CONFLICT DO NOTHING turns a duplicate slug (even one racing in from another process) into
  // an empty result instead of an exception.
  const inserted = await db
    .insertInto('projects')
    .values(row)
    .onConflict((oc) => oc.column('slug').doNothing())
    .returningAll()
    .executeTakeFirst();
  return inserted ? toProject(inserted) : 'slug_taken';
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
  const row = await db
    .updateTable('projects')
    .set({ is_active: active ? 1 : 0, updated_at: now })
    .where('slug', '=', slug)
    .returningAll()
    .executeTakeFirst();
  return row && toProject(row);
}

/** `null` returns the project to the configured default limit. */
export async function setProjectRateLimit(
  db: Kysely<Schema>,
  slug: string,
  max: number | null,
  now: number,
): Promise<Project | undefined> {
  const row = await db
    .updateTable('projects')
    .set({ rate_limit_max: max, updated_at: now })
    .where('slug', '=', slug)
    .returningAll()
    .executeTakeFirst();
  return row && toProject(row);
}
