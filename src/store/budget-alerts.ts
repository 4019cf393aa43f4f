/** The projects whose budgets are watched, and each budget alert recorded once with its mail. */
import type { MailMessage } from '../mail/mailer.js';
import type { Database } from './database.js';
import { enqueueMail } from './outbox/enqueue.js';

export interface BudgetedProject {
  id: string;
  slug: string;
  notificationEmail: string | null;
  budgetMode: string;
  monthlyBudgetUsd: number | null;
  dailyBudgetUsd: number | null;
}

/** Active projects with a budget of their own, and those on the default when one is configured. */
export async function listBudgetedProjects(database: Database, defaultSet: boolean): Promise<BudgetedProject[]> {
  const rows = await database.read
    .selectFrom('projects')
    .select(['id', 'slug', 'notification_email', 'budget_mode', 'monthly_budget_usd', 'daily_budget_usd'])
    .where('is_active', '=', 1)
    .where('budget_mode', 'in', defaultSet ? ['own', 'default'] : ['own'])
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    slug: r.slug,
    notificationEmail: r.notification_email,
    budgetMode: r.budget_mode,
    monthlyBudgetUsd: r.monthly_budget_usd === null ? null : Number(r.monthly_budget_usd),
    dailyBudgetUsd: r.daily_budget_usd === null ? null : Number(r.daily_budget_usd),
  }));
}

/**
 * Records the thresholds a project's spend has passed in a period, each once (the primary key:
 * processes checking at once record each once), and queues `mail` in the same transaction when
 * one of them is new. The thresholds recorded now, highest last.
 */
export async function recordBudgetAlerts(
  database: Database,
  input: {
    projectId: string;
    period: 'month' | 'day';
    starts: number;
    thresholds: number[];
    now: number;
    mail: (threshold: number) => MailMessage | null;
  },
): Promise<number[]> {
  // Read first: once recorded, a threshold stays passed all period, and a write (a commit, an
  // fsync on SQLite) every few seconds per project would be for nothing.
  const known = await database.read
    .selectFrom('budget_alerts')
    .select('threshold')
    .where('project_id', '=', input.projectId)
    .where('period', '=', input.period)
    .where('starts', '=', input.starts)
    .execute();
  const fresh = input.thresholds.filter((t) => !known.some((k) => Number(k.threshold) === t));
  if (fresh.length === 0) return [];
  return database.write.transaction().execute(async (tx) => {
    const recorded: number[] = [];
    for (const threshold of fresh) {
      const row = await tx
        .insertInto('budget_alerts')
        .values({
          project_id: input.projectId,
          period: input.period,
          starts: input.starts,
          threshold,
          created_at: input.now,
        })
        .onConflict((oc) => oc.doNothing())
        .returning('threshold')
        .executeTakeFirst();
      if (row) recorded.push(threshold);
    }
    const highest = recorded.at(-1);
    const mail = highest === undefined ? null : input.mail(highest);
    if (mail) await enqueueMail(tx, mail, input.now);
    return recorded;
  });
}
