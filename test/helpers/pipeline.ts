/** The workers under test: a service's workers over the test database, and helpers that drive cargo to a result. */
import type { Config } from '../../src/config.js';
import type { Clock, ManualClock } from '../../src/domain/clock.js';
import { hasResult } from '../../src/domain/lifecycle.js';
import type { PriceLookup } from '../../src/domain/usage.js';
import { MockProvider } from '../../src/providers/mock/mock-provider.js';
import type { Provider, ProviderLimits } from '../../src/providers/provider.js';
import { createService, type Service } from '../../src/service.js';
import type { Database } from '../../src/store/database.js';
import { storedCargo, testConfig } from './app.js';

/**
 * The workers of a test service over the test database, composed by createService (the same
 * wiring as `barge serve --role worker`), driven step by step with `runUntilIdle` and a
 * ManualClock, or started with `start()` and the system clock.
 */
export async function testWorker(
  database: Database,
  clock: Clock,
  options: {
    latencyMs?: number;
    limits?: Partial<ProviderLimits>;
    /** Pipeline settings: BARGE_BATCH_MAX_SIZE, BARGE_BATCH_MAX_WAIT_MS, BARGE_LEASE_MS, concurrency. */
    settings?: Partial<Config['pipeline']>;
    providers?: Provider[];
    config?: Partial<Config>;
    /** The prices results are costed at (default: the service's built-in ones). */
    prices?: PriceLookup;
  } = {},
): Promise<{ worker: Service; mock: MockProvider }> {
  const base = testConfig(options.config);
  const config: Config = {
    ...base,
    pipeline: { ...base.pipeline, workerId: `test-${Math.random().toString(36).slice(2, 8)}`, ...options.settings },
  };
  const mock = new MockProvider(clock, {
    latencyMs: options.latencyMs ?? 60_000,
    limits: options.limits ?? {},
  });
  const worker = await createService({
    config,
    role: 'worker',
    database,
    clock,
    providers: [mock, ...(options.providers ?? [])],
    ...(options.prices ? { prices: options.prices } : {}),
    startWorkers: false,
    idleMaxMs: 1000,
  });
  return { worker, mock };
}

/** The batch row of a batched cargo. */
export async function batchOfCargo(database: Database, cargoId: string) {
  const { batch_id } = await storedCargo(database, cargoId);
  if (!batch_id) throw new Error(`cargo ${cargoId} is not batched`);
  return database.read.selectFrom('batches').selectAll().where('id', '=', batch_id).executeTakeFirstOrThrow();
}

/**
 * Advances the clock `stepMs` at a time and runs the workers until every cargo of `ids` has its
 * result (the poller backs off with a job's age); fails with their statuses after `tries` steps.
 */
export async function settleCargo(
  worker: Service,
  clock: ManualClock,
  database: Database,
  ids: string[],
  { stepMs, tries }: { stepMs: number; tries: number },
): Promise<void> {
  const statuses = async () => (await Promise.all(ids.map((id) => storedCargo(database, id)))).map((c) => c.status);
  for (let i = 0; i < tries; i++) {
    clock.advance(stepMs);
    await worker.runUntilIdle();
    if ((await statuses()).every(hasResult)) return;
  }
  throw new Error(`cargo did not finish: ${JSON.stringify(await statuses())}`);
}
