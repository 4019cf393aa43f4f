import type { Config } from '../../src/config.js';
import { awsDeliveryDeps } from '../../src/delivery/aws/connection-access.js';
import { buildChannels, delivererSettings } from '../../src/delivery/registry.js';
import type { Clock } from '../../src/domain/clock.js';
import { smtpMailer } from '../../src/mail/mailer.js';
import type { PipelineSettings } from '../../src/pipeline/context.js';
import { PipelineWorker } from '../../src/pipeline/worker.js';
import { MockProvider } from '../../src/providers/mock/mock-provider.js';
import type { Provider, ProviderLimits } from '../../src/providers/provider.js';
import { findProjectConnection } from '../../src/store/connections.js';
import type { Database } from '../../src/store/database.js';
import { testConfig } from './app.js';

const quiet = { info() {}, warn() {}, error() {} };

/**
 * A pipeline worker over the test database, driven step by step with `runUntilIdle` and a
 * ManualClock (or started with `start()` and the system clock).
 */
export function testWorker(
  database: Database,
  clock: Clock,
  options: {
    latencyMs?: number;
    limits?: Partial<ProviderLimits>;
    settings?: Partial<PipelineSettings>;
    providers?: Provider[];
    config?: Partial<Config>;
  } = {},
): { worker: PipelineWorker; mock: MockProvider } {
  const config = testConfig(options.config);
  const mock = new MockProvider(database.write, clock, {
    latencyMs: options.latencyMs ?? 60_000,
    limits: options.limits ?? {},
  });
  const providers = new Map<string, Provider>([[mock.name, mock]]);
  for (const p of options.providers ?? []) providers.set(p.name, p);
  const worker = new PipelineWorker(
    {
      database,
      clock,
      providers,
      settings: {
        batchMaxSize: 10_000,
        batchMaxWaitMs: null,
        leaseMs: 60_000,
        concurrency: 4,
        purgeChunk: 1000,
        ...options.settings,
      },
      workerId: `test-${Math.random().toString(36).slice(2, 8)}`,
      log: quiet,
    },
    {
      idleMaxMs: 1000,
      delivery: {
        channels: buildChannels(config, '0.0.0-test', {
          aws: awsDeliveryDeps(config),
          findConnection: (projectId, id) => findProjectConnection(database.write, projectId, id),
        }),
        settings: delivererSettings(config),
        shutdownGraceMs: 1000,
      },
      mailer: smtpMailer(config.smtp),
    },
  );
  return { worker, mock };
}
