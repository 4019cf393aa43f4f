/** What every pipeline step works with (settings, store, providers, budgets, prices), and the cargo-moves counter. */
import type { Clock } from '../domain/clock.js';
import type { PriceLookup } from '../domain/usage.js';
import type { Logger, Metrics } from '../ports.js';
import type { Provider } from '../providers/provider.js';
import type { Database } from '../store/database.js';
import type { ProviderBudgets } from './byte-budget.js';

export interface PipelineSettings {
  /** Cap on requests per batch below the provider's own (BARGE_BATCH_MAX_SIZE). */
  batchMaxSize: number;
  /** Overrides every provider's default wait before a partial batch is flushed. */
  batchMaxWaitMs: number | null;
  /** How long a worker may hold a batch before another may take it over. */
  leaseMs: number;
  /** Batch steps (submit, poll and collect) a worker runs at once (BARGE_WORKER_CONCURRENCY). */
  concurrency: number;
  /** Of those, at most this many of one provider (BARGE_PROVIDER_CONCURRENCY). */
  providerConcurrency: number;
  /** Results purged per transaction. */
  purgeChunk: number;
}

/** What every pipeline step works with. */
export interface PipelineContext {
  database: Database;
  clock: Clock;
  providers: ReadonlyMap<string, Provider>;
  settings: PipelineSettings;
  workerId: string;
  log: Logger;
  metrics: Metrics;
  /**
   * Request bytes of the submissions this worker builds at once and of the batches it collects at
   * once, per provider (byte-budget.ts): memory follows these bounds, not the largest batches.
   */
  budgets: { submissions: ProviderBudgets; collections: ProviderBudgets };
  /** The prices of a cargo's model, for the cost of its result; null: none known. */
  prices: PriceLookup;
}

/**
 * Cargo that moved, counted by status, provider and model (`barge_cargo_moves_total`): the one
 * place that names the counter, for the API's accepted cargo and each pipeline step.
 */
export function countCargoMoves(
  metrics: Metrics,
  route: { provider: string; provider_model: string },
  movedTo: Map<string, number>,
): void {
  for (const [status, n] of movedTo) {
    metrics.count('barge_cargo_moves_total', { status, provider: route.provider, model: route.provider_model }, n);
  }
}
