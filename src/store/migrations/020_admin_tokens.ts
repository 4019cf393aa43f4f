import type { Kysely } from 'kysely';

/**
 * Admin tokens (decisions.md, "Dashboard and admin API"): the bearer tokens of `/admin/v1/`.
 *
 * - `token_hash`: SHA-256 of the token, unique; the token itself is never stored.
 * - `project_id`: the one project the token sees; null: every project.
 * - `revoked_at`: set by `barge admin-token revoke`; a revoked token is kept (its prefix still
 *   names it in the list) and refused from the next request on.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('admin_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.references('projects.id'))
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
}
