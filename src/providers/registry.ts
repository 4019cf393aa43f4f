import { type ModelRoute, ModelRouter } from './routing.js';

/** The models this build can serve. Providers are added here as their adapters land. */
export function defaultModelRouter(): ModelRouter {
  const table = new Map<string, ModelRoute>([['svc-mock', { provider: 'mock', providerModel: 'svc-mock' }]]);
  return new ModelRouter(table);
}
