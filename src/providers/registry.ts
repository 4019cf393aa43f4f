import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { MockProvider } from './mock/mock-provider.js';
import type { Provider } from './provider.js';
import { type ModelRoute, ModelRouter } from './routing.js';

/** The models this build can serve. Providers are added here as their adapters land. */
export function defaultModelRouter(): ModelRouter {
  const table = new Map<string, ModelRoute>([['svc-mock', { provider: 'mock', providerModel: 'svc-mock' }]]);
  return new ModelRouter(table);
}

/** The configured provider adapters, by the name model routes use. */
export function buildProviders(config: Config, clock: Clock): Map<string, Provider> {
  const mock = new MockProvider(clock, { latencyMs: config.mockLatencyMs });
  return new Map<string, Provider>([[mock.name, mock]]);
}
