/** The queue statistics /metrics reads from the store at scrape time. */
import { sql } from 'kysely';
import type { Database } from './database.js';

/**
 * What the metrics endpoint reads from the store at scrape time, each from an index: unended
 * batches by provider and status, pending cargo by provider model (count, oldest and projects), and due
 * deliveries by channel (count and the oldest due time).
 */
export interface QueueStats {
  batches: { provider: string; status: string; count: number }[];
  /** `projects`: how many projects have pending cargo of the model (fair forming takes them in turn). */
  pending: { provider: string; model: string; count: number; oldestAt: number; projects: number }[];
  dueDeliveries: { channel: string; count: number; oldestDueAt: number }[];
}

export async function queueStats(database: Database, now: number): Promise<QueueStats> {
  const db = database.read;
  const [batches, pending, due] = await Promise.all([
    db
      .selectFrom('batches')
      .select(['provider', 'status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', '<>', 'ended')
      .groupBy(['provider', 'status'])
      .execute(),
    // Literal status: SQLite reads the partial index cargo_pending_by_project only for a condition it sees.
    db
      .selectFrom('cargo')
      .select([
        'provider',
        'provider_model',
        (eb) => eb.fn.countAll<number>().as('n'),
        (eb) => eb.fn.min('created_at').as('oldest'),
        (eb) => eb.fn.count<number>('project_id').distinct().as('projects'),
      ])
      .where(sql<boolean>`status = 'pending'`)
      .groupBy(['provider', 'provider_model'])
      .execute(),
    db
      .selectFrom('deliveries')
      .select(['channel', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('next_attempt_at').as('oldest')])
      .where(sql<boolean>`status = 'pending'`)
      .where('next_attempt_at', '<=', now)
      .groupBy('channel')
      .execute(),
  ]);
  return {
    batches: batches.map((b) => ({ provider: b.provider, status: b.status, count: Number(b.n) })),
    pending: pending.map((p) => ({
      provider: p.provider,
      model: p.provider_model,
      count: Number(p.n),
      oldestAt: Number(p.oldest),
      projects: Number(p.projects),
    })),
    dueDeliveries: due.map((d) => ({ channel: d.channel, count: Number(d.n), oldestDueAt: Number(d.oldest) })),
  };
}
