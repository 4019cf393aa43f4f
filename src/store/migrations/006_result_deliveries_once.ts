import { type Kysely, sql } from 'kysely';

/**
 * A result creates its deliveries once: at most one delivery per cargo and channel with trigger
 * `result` (redeliveries have their own trigger). Databases that already hold a second one (a
 * result stored twice before this rule) keep it, renamed `result_duplicate`, so nothing is lost.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update deliveries set trigger = 'result_duplicate'
    where trigger = 'result' and exists (
      select 1 from deliveries earlier
      where earlier.cargo_id = deliveries.cargo_id and earlier.channel = deliveries.channel
        and earlier.trigger = 'result'
        and (earlier.created_at < deliveries.created_at
          or (earlier.created_at = deliveries.created_at and earlier.id < deliveries.id)))`.execute(db);
  await db.schema
    .createIndex('deliveries_result_once')
    .on('deliveries')
    .columns(['cargo_id', 'channel'])
    .unique()
    .where(sql.ref('trigger'), '=', 'result')
    .execute();
}
