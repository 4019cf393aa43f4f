/** Queuing mail in the outbox, in the transaction of the change it reports. */
import type { Transaction } from 'kysely';
import { newId } from '../../domain/ids.js';
import type { MailMessage } from '../../mail/mailer.js';
import type { Schema } from '../schema.js';

/**
 * The outbox: mail that must go out at least once (a connection's incident mail). A row is
 * written in the transaction of the change it reports, so a process that dies right after the
 * change still sends it once restarted; the sender leases rows, and retries with backoff.
 */
export async function enqueueMail(tx: Transaction<Schema>, mail: MailMessage, now: number) {
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
