/**
 * The requests of a provider-compatible batch, read a page at a time with their cargo and results.
 * A page is a range of positions, not only `position > after … limit`: positions are dense (0 to
 * the request count less one), and with the limit alone PostgreSQL, whose estimate for a batch just
 * written is far too low, sorted every request of the batch after `after` for each page (0.5 s a
 * page of a 50,000-request batch). The range keeps a page's cost to its own rows.
 */
import type { CargoStatus } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';

/** Rows of a batch read a page at a time. */
const PAGE = 5000;

/** The cargo ids of a batch that are still pending or batched (those a cancel may stop), in pages. */
export async function* cancelableCargoIds(database: Database, batchId: string): AsyncGenerator<string[]> {
  let after = -1;
  for (;;) {
    const rows = await database.read
      .selectFrom('compat_batch_requests as q')
      .innerJoin('cargo as c', 'c.id', 'q.cargo_id')
      .select(['q.position', 'q.cargo_id', 'c.status'])
      .where('q.batch_id', '=', batchId)
      .where('q.position', '>', after)
      .where('q.position', '<=', after + PAGE)
      .orderBy('q.position')
      .limit(PAGE)
      .execute();
    const open: CargoStatus[] = ['pending', 'batched'];
    const ids = rows.filter((r) => open.includes(r.status)).map((r) => r.cargo_id);
    if (ids.length > 0) yield ids;
    if (rows.length < PAGE) return;
    after = Number(rows[rows.length - 1]?.position);
  }
}

/** One request of a batch with its cargo's status and result. */
export interface CompatRequestRow {
  position: number;
  customId: string;
  cargoId: string;
  status: CargoStatus;
  success: number | null;
  response: string | null;
  errorMessage: string | null;
  resultAt: number | null;
}

/** A batch's requests from `afterPosition` on, in submission order, with their results: one page of `size`. */
export async function compatRequestPage(
  database: Database,
  input: { batchId: string; afterPosition: number; size: number },
): Promise<CompatRequestRow[]> {
  const rows = await database.read
    .selectFrom('compat_batch_requests as q')
    .innerJoin('cargo as c', 'c.id', 'q.cargo_id')
    .leftJoin('results as r', 'r.cargo_id', 'c.id')
    .select([
      'q.position',
      'q.custom_id',
      'q.cargo_id',
      'c.status',
      'r.success',
      'r.response',
      'r.error_message',
      'r.created_at',
    ])
    .where('q.batch_id', '=', input.batchId)
    .where('q.position', '>', input.afterPosition)
    .where('q.position', '<=', input.afterPosition + input.size)
    .orderBy('q.position')
    .limit(input.size)
    .execute();
  return rows.map((r) => ({
    position: Number(r.position),
    customId: r.custom_id,
    cargoId: r.cargo_id,
    status: r.status,
    success: r.success === null ? null : Number(r.success),
    response: r.response,
    errorMessage: r.error_message,
    resultAt: r.created_at === null ? null : Number(r.created_at),
  }));
}
