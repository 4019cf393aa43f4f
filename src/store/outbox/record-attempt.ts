/** Recording an outbox send: sent, to be retried, or given up. */
import type { Database } from '../database.js';

/**
 * Records a send: `sent`, or a failure retried at `retryAt` (null: given up, kept as `failed` for
 * the operator to see). Only the lease holder may record.
 */
export async function recordMailAttempt(
  database: Database,
  input: { id: string; workerId: string; now: number } & (
    | { sent: true }
    | { sent: false; error: string; retryAt: number | null }
  ),
): Promise<void> {
  await database.write
    .updateTable('outbox')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      locked_by: null,
      locked_until: null,
      ...(input.sent
        ? { status: 'sent' as const, sent_at: input.now, last_error: null }
        : input.retryAt === null
          ? { status: 'failed' as const, last_error: input.error }
          : { next_attempt_at: input.retryAt, last_error: input.error }),
    }))
    .where('id', '=', input.id)
    .where('locked_by', '=', input.workerId)
    .execute();
}
