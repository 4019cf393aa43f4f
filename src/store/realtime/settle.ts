/** Storing how sent requests of a real-time endpoint ended: one transaction for all of them, each guarded by its lease. */
import type { Settlement } from '../../domain/realtime-requests.js';
import type { Database } from '../database.js';

/**
 * One statement per request, sent together (on a SQLite file the write thread runs them from one
 * message). A request is changed only while this worker holds its lease and it is still queued: a
 * worker whose lease lapsed (another took the request over) stores nothing, so each request is
 * answered once.
 */
export async function settleRealtimeRequests(
  database: Database,
  workerId: string,
  settlements: readonly Settlement[],
  now: number,
): Promise<void> {
  const statements = settlements.map((s) =>
    database.write
      .updateTable('realtime_requests')
      .set({
        ...(s.kind === 'answered' && { state: 'answered', response: s.response, error: null }),
        ...(s.kind === 'failed' && { state: 'failed', error: s.error }),
        ...(s.kind === 'expired' && { state: 'expired', error: s.error }),
        ...(s.kind === 'retry' && { next_attempt_at: s.at, error: s.error }),
        locked_by: null,
        locked_until: null,
        updated_at: now,
      })
      .where('batch_id', '=', s.batchId)
      .where('custom_id', '=', s.customId)
      .where('locked_by', '=', workerId)
      .where('state', '=', 'queued')
      .compile(),
  );
  await database.writeAll(statements);
}
