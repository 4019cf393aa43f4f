/** Admin tokens: create, list, revoke, look up by hash, and record use. */
import { adminTokenPrefix, generateAdminToken, hashAdminToken } from '../../domain/admin-tokens.js';
import { newId } from '../../domain/ids.js';
import { bumpAuthChanges } from '../auth-changes.js';
import type { Database } from '../database.js';
import type { AdminTokensTable } from '../schema.js';

export interface AdminToken {
  id: string;
  name: string;
  /** The one project the token sees (id and slug); null: every project. */
  project: { id: string; slug: string } | null;
  tokenPrefix: string;
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

function toAdminToken(row: AdminTokensTable, slug: string | null): AdminToken {
  return {
    id: row.id,
    name: row.name,
    project: row.project_id === null ? null : { id: row.project_id, slug: slug ?? '' },
    tokenPrefix: row.token_prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Creates a token and returns it in full: the only time it exists outside its holder. */
export async function createAdminToken(
  database: Database,
  input: { name: string; project: { id: string; slug: string } | null; now: number },
): Promise<{ adminToken: AdminToken; token: string }> {
  const token = generateAdminToken();
  const row: AdminTokensTable = {
    id: newId('adt', input.now),
    name: input.name,
    project_id: input.project?.id ?? null,
    token_prefix: adminTokenPrefix(token),
    token_hash: hashAdminToken(token),
    created_at: input.now,
    revoked_at: null,
    last_used_at: null,
  };
  await database.write.insertInto('admin_tokens').values(row).execute();
  return { adminToken: toAdminToken(row, input.project?.slug ?? null), token };
}

const withSlug = (database: Database) =>
  database.read
    .selectFrom('admin_tokens as t')
    .leftJoin('projects as p', 'p.id', 't.project_id')
    .selectAll('t')
    .select('p.slug');

export async function listAdminTokens(database: Database): Promise<AdminToken[]> {
  const rows = await withSlug(database).orderBy('t.created_at').orderBy('t.id').execute();
  return rows.map((row) => toAdminToken(row, row.slug));
}

/**
 * Revokes a token (kept, with the time). Bumps the auth change counter in the same transaction, so
 * anything that caches tokens sees it at once; the admin scope itself looks tokens up on every
 * request (src/http/admin/auth.ts). Undefined when no token has the id; a token revoked before
 * keeps its first revocation time.
 */
export async function revokeAdminToken(database: Database, id: string, now: number): Promise<AdminToken | undefined> {
  const revoked = await database.write.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('admin_tokens')
      .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    if (row) await bumpAuthChanges(tx);
    return row !== undefined;
  });
  if (!revoked) return undefined;
  const row = await withSlug(database).where('t.id', '=', id).executeTakeFirstOrThrow();
  return toAdminToken(row, row.slug);
}

/** What the admin scope needs to know about a presented token, found by its SHA-256. */
export interface AdminTokenCredentials {
  tokenId: string;
  tokenName: string;
  revoked: boolean;
  /** The project it is limited to; null: every project. */
  project: { id: string; slug: string } | null;
}

export async function findAdminTokenCredentials(
  database: Database,
  tokenHash: string,
): Promise<AdminTokenCredentials | undefined> {
  const row = await database.read
    .selectFrom('admin_tokens as t')
    .leftJoin('projects as p', 'p.id', 't.project_id')
    .select(['t.id', 't.name', 't.revoked_at', 't.project_id', 'p.slug'])
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    tokenId: row.id,
    tokenName: row.name,
    revoked: row.revoked_at !== null,
    project: row.project_id === null ? null : { id: row.project_id, slug: row.slug ?? '' },
  };
}

export async function touchAdminToken(database: Database, id: string, now: number): Promise<void> {
  await database.write.updateTable('admin_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
}
