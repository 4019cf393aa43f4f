/** The provider adapters this process runs, built from the config; model routing is in domain/model-routing.ts. */
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { MockProvider } from './mock/mock-provider.js';
import type { Provider } from './provider.js';

/**
 * The configured provider adapters, by the name model routes use: svc-mock, and each real one whose
 * settings are present. A real provider's module (and its SDK, hundreds of files) is loaded only
 * when it is enabled, so a process that does not use it does not pay for it at every start.
 */
export async function buildProviders(config: Config, clock: Clock): Promise<Map<string, Provider>> {
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
  return new Map(providers.map((p) => [p.name, p]));
}
