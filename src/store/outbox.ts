import type { Kysely, Transaction } from 'kysely';
import { newId } from '../domain/ids.js';
import type { MailMessage } from '../mail/mailer.js';
import type { Database } from './database.js';
import { nextDueAt } from './leases.js';
import type { Schema } from './schema.js';

/**
 * The outbox: mail that must go out at least once (a connection's incident mail). A row is
 * written in the transaction of the change it reports, so a process that dies right after the
 * change still sends it once restarted; the sender leases rows, and retries with backoff.
 */
export async function enqueueMail(tx: Transaction<Schema> | Kysely<Schema>, mail: MailMessage, now: number) {
  await tx
    .insertInto('outbox')
    .values({
      id: newId('out', now),
      kind: 'mail',
      payload: JSON.stringify(mail),
      status: 'pending',
      next_attempt_at: now,
      locked_by: null,
      locked_until: null,
      last_error: null,
      created_at: now,
      sent_at: null,
    })
    .execute();
}

export interface DueMail {
  id: string;
  attempts: number;
  mail: MailMessage;
}

/** Leases due pending messages (SKIP LOCKED on PostgreSQL). */
export async function claimDueMail(
  database: Database,
  input: { workerId: string; now: number; leaseMs: number; limit: number },
): Promise<DueMail[]> {
  return database.write.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('outbox')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', input.now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', input.now)]))
      .orderBy('next_attempt_at')
      .limit(input.limit)
      .$if(database.dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
      .execute();
    if (due.length === 0) return [];
    const rows = await tx
      .updateTable('outbox')
      .set({ locked_by: input.workerId, locked_until: input.now + input.leaseMs })
      .where(
        'id',
        'in',
        due.map((d) => d.id),
      )
      .returning(['id', 'attempts', 'payload'])
      .execute();
    return rows.map((r) => ({ id: r.id, attempts: r.attempts, mail: JSON.parse(r.payload) as MailMessage }));
  });
}

/**
 * Records a send: `sent`, or a failure retried at `retryAt` (null: given up, kept as `failed` for
 * the operator to see). Only the lease holder may record.
 */
export async function recordMailAttempt(
  db: Kysely<Schema>,
  input: { id: string; workerId: string; now: number } & (
    | { sent: true }
    | { sent: false; error: string; retryAt: number | null }
  ),
): Promise<void> {
  await db
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

/** When the next pending message is due (a lease in flight counts at its end). */
export function nextMailAt(db: Kysely<Schema>): Promise<number | null> {
  return nextDueAt(db, 'outbox', { status: 'pending' });
}
