/** The provider adapters this process runs, built from the config; model routing is in domain/model-routing.ts. */
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { AnthropicProvider } from './anthropic/anthropic-provider.js';
import { BedrockProvider } from './bedrock/bedrock-provider.js';
import { MockProvider } from './mock/mock-provider.js';
import { OpenAIProvider } from './openai/openai-provider.js';
import type { Provider } from './provider.js';

/** The configured provider adapters, by the name model routes use: svc-mock, and each real one whose settings are present. */
export function buildProviders(config: Config, clock: Clock): Map<string, Provider> {
  const providers: Provider[] = [new MockProvider(clock, { latencyMs: config.mockLatencyMs })];
  const { anthropic, openai, bedrock } = config.providers;
  if (anthropic) providers.push(new AnthropicProvider({ ...anthropic, clock }));
  if (openai) providers.push(new OpenAIProvider({ ...openai, clock }));
  if (bedrock) {
    // Staging goes through S3 as object delivery reaches it (endpoint, path style), with the
    // service's own identity rather than a delivery session's.
    const { s3Endpoint, forcePathStyle, credentials } = config.objectStore;
    providers.push(new BedrockProvider({ ...bedrock, s3Endpoint, forcePathStyle, credentials, clock }));
  }
  return new Map(providers.map((p) => [p.name, p]));
}
