/** A catalog with one real-time endpoint for the openai-compatible provider's tests and bench, and its config. */
import type { Config, EndpointConfig } from '../../src/config.js';
import { parseModelCatalog } from '../../src/domain/model-catalog.js';
import { testConfig } from './app.js';

export const REALTIME_MODEL = 'llama-test';
export const SERVED_MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
/** Batch prices listed too: an endpoint's requests must be billed at the real-time ones all the same. */
export const REALTIME_PRICES = { input: 2, output: 8, batch_input: 1, batch_output: 4 };

export interface EndpointOptions {
  baseUrl: string;
  maxConcurrency: number;
  timeoutMs: number;
  apiKeyEnv?: string;
}

/** The catalog's JSON text: endpoint `gpu-1` serving REALTIME_MODEL as SERVED_MODEL. */
export function realtimeCatalogText(endpoint: EndpointOptions): string {
  return JSON.stringify({
    endpoints: {
      'gpu-1': {
        base_url: endpoint.baseUrl,
        ...(endpoint.apiKeyEnv !== undefined && { api_key_env: endpoint.apiKeyEnv }),
        max_concurrency: endpoint.maxConcurrency,
        timeout_ms: endpoint.timeoutMs,
      },
    },
    models: [
      {
        id: REALTIME_MODEL,
        routes: [{ provider: 'openai-compatible', endpoint: 'gpu-1', model: SERVED_MODEL }],
        max_output_tokens: 4096,
        prices_usd_per_mtok: REALTIME_PRICES,
      },
    ],
  });
}

/** Config overrides for in-process services: the catalog, and the endpoint enabled with `apiKey`. */
export function realtimeConfig(endpoint: EndpointOptions & { apiKey: string | null }): Partial<Config> {
  const models = parseModelCatalog(realtimeCatalogText(endpoint), 'realtime-test-catalog.json');
  const gpu = models.endpoints['gpu-1'];
  if (!gpu) throw new Error('no endpoint in the test catalog');
  const endpoints: Record<string, EndpointConfig> = { 'gpu-1': { ...gpu, apiKey: endpoint.apiKey } };
  return { models, providers: { ...testConfig().providers, openaiCompatible: { endpoints } } };
}

/** A cargo body for REALTIME_MODEL whose user message is `text` (the emulator's request key). */
export const realtimeBody = (text: string, params: Record<string, unknown> = {}) => ({
  params: { model: REALTIME_MODEL, messages: [{ role: 'user', content: text }], max_tokens: 50, ...params },
});
