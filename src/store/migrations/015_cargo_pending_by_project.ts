import { type Kysely, sql } from 'kysely';

/**
 * A group's pending cargo by project, each project's oldest first: forming a batch takes a group's
 * cargo round robin across projects (store/batches/form.ts), reading each project's oldest from this
 * index and the projects themselves by a loose scan of it. `cargo_pending` stays: the batcher finds
 * each group's oldest cargo, whatever its project, from it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('cargo_pending_by_project')
    .on('cargo')
    .columns(['provider', 'provider_model', 'project_id', 'created_at', 'id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}
