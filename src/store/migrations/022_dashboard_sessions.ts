import type { Kysely } from 'kysely';

/**
 * Dashboard sessions (decisions.md, "Dashboard and admin API"): a browser signed in with an admin
 * token.
 *
 * - `session_hash`: SHA-256 of the session id the cookie carries, unique; the id itself is never stored.
 * - `admin_token_id`: the token it was opened with; every request checks that token is not revoked.
 * - `last_seen_at`, `idle_expires_at`: the last recorded use, and when the session ends unless used again.
 * - `expires_at`: the absolute end, fixed at sign-in.
 * Signing out deletes the row; expired rows are deleted at later sign-ins.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('admin_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('session_hash', 'text', (c) => c.notNull().unique())
    .addColumn('admin_token_id', 'text', (c) => c.notNull().references('admin_tokens.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('idle_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('admin_sessions_expires_at').on('admin_sessions').column('expires_at').execute();
}
