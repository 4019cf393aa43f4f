/** The provider adapters this process runs, built from the config; model routing is in domain/model-routing.ts. */
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { Database } from '../store/database.js';
import { MockProvider } from './mock/mock-provider.js';
import type { Provider } from './provider.js';

/** The configured provider adapters, by the name model routes use. */
export function buildProviders(config: Config, database: Database, clock: Clock): Map<string, Provider> {
  const mock = new MockProvider(database, clock, { latencyMs: config.mockLatencyMs });
  return new Map<string, Provider>([[mock.name, mock]]);
}
