/** Due outbox mail: leasing pending messages, and when the next one is due. */
import type { MailMessage } from '../../mail/mailer.js';
import type { Database } from '../database.js';
import { claimDue, nextDueAt } from '../leases.js';

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
  const rows = await claimDue(database, 'outbox', { ...input, status: 'pending' });
  return rows.map((r) => ({ id: r.id, attempts: r.attempts, mail: JSON.parse(r.payload) as MailMessage }));
}

/** When the next pending message is due (a lease in flight counts at its end). */
export function nextMailAt(database: Database): Promise<number | null> {
  return nextDueAt(database, 'outbox', { status: 'pending' });
}
