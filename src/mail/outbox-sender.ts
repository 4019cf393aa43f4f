/** The mail outbox's sender: each due mail sent at least once, retried with backoff for about a day. */
import type { Clock } from '../domain/clock.js';
import type { Logger } from '../ports.js';
import type { Database } from '../store/database.js';
import { claimDueMail, nextMailAt } from '../store/outbox/due.js';
import { recordMailAttempt } from '../store/outbox/record-attempt.js';
import type { Mailer } from './mailer.js';

/** Retries of a mail the server refused or could not be reached for: 30 s doubling to 1 h, 12 tries (about a day). */
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 3_600_000;
const MAX_TRIES = 12;

export interface OutboxSenderDeps {
  database: Database;
  clock: Clock;
  mailer: Mailer;
  workerId: string;
  /** How long a claimed message is this worker's: a worker that dies while sending lets it lapse. */
  leaseMs: number;
  log: Logger;
}

/** One pass of the outbox: sends what is due, at least once each; returns when to look again. */
export async function sendDueMail(deps: OutboxSenderDeps): Promise<{ didWork: boolean; nextAt: number | null }> {
  const { database, clock, mailer, workerId, log } = deps;
  const due = await claimDueMail(database, { workerId, now: clock.now(), leaseMs: deps.leaseMs, limit: 20 });
  for (const item of due) {
    const sent = await mailer.send(item.mail);
    const now = clock.now();
    if (sent.sent) {
      await recordMailAttempt(database, { id: item.id, workerId, now, sent: true });
      log.info({ mail: item.id, to: item.mail.to }, 'mail sent');
      continue;
    }
    const tries = item.attempts + 1;
    const retryAt = tries >= MAX_TRIES ? null : now + Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (tries - 1));
    await recordMailAttempt(database, { id: item.id, workerId, now, sent: false, error: sent.reason, retryAt });
    log.warn(
      { mail: item.id, reason: sent.reason, tries },
      retryAt === null ? 'mail given up' : 'mail not sent; will retry',
    );
  }
  return { didWork: due.length > 0, nextAt: due.length > 0 ? null : await nextMailAt(database) };
}
