/** Dashboard sessions: open one (clearing expired ones), look one up with its admin token, record use, end one. */
import { newId } from '../../domain/ids.js';
import type { Database } from '../database.js';

export interface NewAdminSession {
  sessionHash: string;
  adminTokenId: string;
  createdAt: number;
  lastSeenAt: number;
  idleExpiresAt: number;
  expiresAt: number;
}

/**
 * Stores a new session and, in the same transaction, deletes sessions that ended by time (at most
 * 1,000 a sign-in, oldest first: the table stays as small as the sessions in use).
 */
export async function insertAdminSession(database: Database, session: NewAdminSession): Promise<{ id: string }> {
  const id = newId('ses', session.createdAt);
  const now = session.createdAt;
  await database.write.transaction().execute(async (tx) => {
    const ended = tx
      .selectFrom('admin_sessions')
      .select('id')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('idle_expires_at', '<=', now)]))
      .orderBy('expires_at')
      .limit(1000);
    await tx.deleteFrom('admin_sessions').where('id', 'in', ended).execute();
    await tx
      .insertInto('admin_sessions')
      .values({
        id,
        session_hash: session.sessionHash,
        admin_token_id: session.adminTokenId,
        created_at: session.createdAt,
        last_seen_at: session.lastSeenAt,
        idle_expires_at: session.idleExpiresAt,
        expires_at: session.expiresAt,
      })
      .execute();
  });
  return { id };
}

/** A stored session with what the admin scope needs of its token (looked up together, on every request). */
export interface AdminSessionCredentials {
  id: string;
  createdAt: number;
  lastSeenAt: number;
  idleExpiresAt: number;
  expiresAt: number;
  tokenId: string;
  tokenName: string;
  tokenRevoked: boolean;
  /** The one project the token sees; null: every project. */
  project: { id: string; slug: string } | null;
}

export async function findAdminSession(
  database: Database,
  sessionHash: string,
): Promise<AdminSessionCredentials | undefined> {
  const row = await database.read
    .selectFrom('admin_sessions as s')
    .innerJoin('admin_tokens as t', 't.id', 's.admin_token_id')
    .leftJoin('projects as p', 'p.id', 't.project_id')
    .select([
      's.id',
      's.created_at',
      's.last_seen_at',
      's.idle_expires_at',
      's.expires_at',
      't.id as token_id',
      't.name as token_name',
      't.revoked_at',
      't.project_id',
      'p.slug',
    ])
    .where('s.session_hash', '=', sessionHash)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    idleExpiresAt: row.idle_expires_at,
    expiresAt: row.expires_at,
    tokenId: row.token_id,
    tokenName: row.token_name,
    tokenRevoked: row.revoked_at !== null,
    project: row.project_id === null ? null : { id: row.project_id, slug: row.slug ?? '' },
  };
}

/** Records a use: the session's idle expiry moves to `idleExpiresAt`. */
export async function touchAdminSession(
  database: Database,
  id: string,
  now: number,
  idleExpiresAt: number,
): Promise<void> {
  await database.write
    .updateTable('admin_sessions')
    .set({ last_seen_at: now, idle_expires_at: idleExpiresAt })
    .where('id', '=', id)
    .execute();
}

/** Signing out: the row goes, so the cookie opens nothing from the next request on. */
export async function deleteAdminSession(database: Database, id: string): Promise<void> {
  await database.write.deleteFrom('admin_sessions').where('id', '=', id).execute();
}
