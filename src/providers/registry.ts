/** The provider adapters this process runs, built from the config; model routing is in domain/model-routing.ts. */
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { MockProvider } from './mock/mock-provider.js';
import type { Provider } from './provider.js';

/** The configured provider adapters, by the name model routes use. */
export function buildProviders(config: Config, clock: Clock): Map<string, Provider> {
  const mock = new MockProvider(clock, { latencyMs: config.mockLatencyMs });
  return new Map<string, Provider>([[mock.name, mock]]);
}
