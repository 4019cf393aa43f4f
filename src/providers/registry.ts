/** The provider adapters this process runs, built from the config; model routing is in domain/model-routing.ts. */
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { REALTIME_PROVIDER } from '../domain/model-catalog.js';
import type { RealtimeQueue } from '../domain/realtime-requests.js';
import { MockProvider } from './mock/mock-provider.js';
import { OpenAICompatibleProvider } from './openai-compatible/realtime-provider.js';
import type { Endpoint } from './openai-compatible/send-request.js';
import type { Provider } from './provider.js';

/** What a worker adds for the `openai-compatible` provider: its requests' store, and the runner to wake. */
export interface RealtimeWiring {
  queue: RealtimeQueue;
  onEnqueued: (endpoint: string) => void;
}

/**
 * The configured provider adapters, by the name model routes use: svc-mock, and each real one whose
 * settings are present. Without `realtime` (no database: `barge provider check`), the
 * openai-compatible adapter can only check its endpoints. A provider's module with its SDK (hundreds
 * of files) is loaded only when the provider is enabled: a process that does not use it does not
 * pay for it at every start.
 */
export async function buildProviders(
  config: Config,
  clock: Clock,
  realtime: RealtimeWiring | null = null,
): Promise<Map<string, Provider>> {
  const providers: Provider[] = [new MockProvider(clock, { latencyMs: config.mockLatencyMs })];
  const { anthropic, openai, bedrock } = config.providers;
  if (anthropic) {
    const { AnthropicProvider } = await import('./anthropic/anthropic-provider.js');
    providers.push(new AnthropicProvider({ ...anthropic, clock }));
  }
  if (openai) {
    const { OpenAIProvider } = await import('./openai/openai-provider.js');
    providers.push(new OpenAIProvider({ ...openai, clock }));
  }
  if (bedrock) {
    const { BedrockProvider } = await import('./bedrock/bedrock-provider.js');
    // Staging goes through S3 as object delivery reaches it (endpoint, path style), with the
    // service's own identity rather than a delivery session's.
    const { s3Endpoint, forcePathStyle, credentials } = config.objectStore;
    providers.push(new BedrockProvider({ ...bedrock, s3Endpoint, forcePathStyle, credentials, clock }));
  }
  const endpoints = enabledEndpoints(config);
  if (endpoints.size > 0) {
    providers.push(
      new OpenAICompatibleProvider({
        endpoints,
        queue: realtime?.queue ?? null,
        clock,
        ...(realtime && { onEnqueued: realtime.onEnqueued }),
        modelsOf: (endpoint) => [
          ...new Set(
            config.models.entries.flatMap((entry) =>
              entry.routes
                .filter((r) => r.provider === REALTIME_PROVIDER && r.endpoint === endpoint)
                .map((r) => r.model),
            ),
          ),
        ],
      }),
    );
  }
  return new Map(providers.map((p) => [p.name, p]));
}

/** The catalog's endpoints enabled in this deployment (config.ts endpointSettings), by name. */
export function enabledEndpoints(config: Config): Map<string, Endpoint> {
  const endpoints = config.providers.openaiCompatible?.endpoints ?? {};
  return new Map(Object.entries(endpoints).map(([name, endpoint]) => [name, { ...endpoint, name }]));
}
