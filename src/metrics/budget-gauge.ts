/** The gauge of /metrics that shows each budgeted project's spend against its budget, read at scrape time. */
import type { Clock } from '../domain/clock.js';
import { budgetRatios } from '../operations/budget-alerts.js';
import type { Database } from '../store/database.js';
import type { PrometheusMetrics } from './prometheus.js';

/** Scrapes closer together than this share one read of the store. */
const RATIO_TTL_MS = 5000;

/**
 * `barge_project_budget_ratio{project}`: spent ÷ budget of the project's fullest budget (its
 * month's or its day's), for every project with a budget. 1 means a budget is spent.
 */
export function registerBudgetGauge(
  metrics: PrometheusMetrics,
  deps: { database: Database; clock: Clock; defaultMonthlyBudgetUsd: number | null },
): void {
  let cached: { at: number; ratios: ReturnType<typeof budgetRatios> } | null = null;
  metrics.gauge(
    'barge_project_budget_ratio',
    "A project's spend over its budget (its fullest: the month's or the day's)",
    ['project'],
    async () => {
      const now = deps.clock.now();
      if (!cached || now - cached.at > RATIO_TTL_MS) {
        cached = { at: now, ratios: budgetRatios(deps) };
        cached.ratios.catch(() => {
          cached = null;
        });
      }
      const fullest = new Map<string, number>();
      for (const r of await cached.ratios) fullest.set(r.slug, Math.max(fullest.get(r.slug) ?? 0, r.ratio));
      return [...fullest].map(([project, value]) => ({ labels: { project }, value }));
    },
  );
}
