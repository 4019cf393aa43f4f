/** The queue gauges of /metrics: batches, pending cargo and due deliveries, read from the store at scrape time. */
import type { Clock } from '../domain/clock.js';
import type { Database } from '../store/database.js';
import { type QueueStats, queueStats } from '../store/stats.js';
import type { PrometheusMetrics } from './prometheus.js';

/** Scrapes closer together than this share one read of the store. */
const STATS_TTL_MS = 5000;

/**
 * The gauges read from the store at scrape time: unended batches by provider and state, pending
 * cargo by provider model, the age of the oldest and the projects waiting, due deliveries by channel and how late the
 * oldest is. One read serves every gauge of a scrape.
 */
export function registerQueueGauges(metrics: PrometheusMetrics, database: Database, clock: Clock): void {
  let cached: { at: number; stats: Promise<QueueStats> } | null = null;
  const stats = () => {
    const now = clock.now();
    if (!cached || now - cached.at > STATS_TTL_MS) {
      cached = { at: now, stats: queueStats(database, now) };
      cached.stats.catch(() => {
        cached = null;
      });
    }
    return cached.stats;
  };
  const ageSeconds = (at: number) => Math.max(0, (clock.now() - at) / 1000);
  metrics.gauge('barge_batches', 'Unended batches by provider and state', ['provider', 'state'], async () =>
    (await stats()).batches.map((b) => ({ labels: { provider: b.provider, state: b.status }, value: b.count })),
  );
  metrics.gauge('barge_cargo_pending', 'Pending cargo by provider and model', ['provider', 'model'], async () =>
    (await stats()).pending.map((p) => ({ labels: { provider: p.provider, model: p.model }, value: p.count })),
  );
  metrics.gauge(
    'barge_cargo_pending_oldest_age_seconds',
    'Age of the oldest pending cargo, by provider and model',
    ['provider', 'model'],
    async () =>
      (await stats()).pending.map((p) => ({
        labels: { provider: p.provider, model: p.model },
        value: ageSeconds(p.oldestAt),
      })),
  );
  metrics.gauge(
    'barge_projects_waiting',
    'Projects with pending cargo, by provider and model (each gets a turn in every batch formed)',
    ['provider', 'model'],
    async () =>
      (await stats()).pending.map((p) => ({ labels: { provider: p.provider, model: p.model }, value: p.projects })),
  );
  metrics.gauge('barge_deliveries_due', 'Deliveries due now, by channel', ['channel'], async () =>
    (await stats()).dueDeliveries.map((d) => ({ labels: { channel: d.channel }, value: d.count })),
  );
  metrics.gauge(
    'barge_deliveries_due_oldest_age_seconds',
    'How long the oldest due delivery has been due, by channel',
    ['channel'],
    async () =>
      (await stats()).dueDeliveries.map((d) => ({ labels: { channel: d.channel }, value: ageSeconds(d.oldestDueAt) })),
  );
}
