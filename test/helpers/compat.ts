/**
 * A suite of the provider-compatible endpoints: the harness over one backend, on a ManualClock
 * that the Anthropic and OpenAI emulators share, both providers enabled against them (each batch
 * ends at its first poll), so that one batch can mix svc-mock, a Claude and a GPT model.
 */
import { after, before } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { type AnthropicEmulator, startAnthropicEmulator } from './anthropic-emulator.js';
import { testConfig } from './app.js';
import type { Backend } from './backends.js';
import { type Harness, harness } from './harness.js';
import { type OpenAIEmulator, startOpenAIEmulator } from './openai-emulator.js';

export interface CompatSuite {
  clock: ManualClock;
  h: Harness;
  /** The emulators (valid once the suite's `before` has run). */
  anthropic(): AnthropicEmulator;
  openai(): OpenAIEmulator;
}

export function compatSuite(backend: Backend): CompatSuite {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
  let anthropic: AnthropicEmulator | undefined;
  let openai: OpenAIEmulator | undefined;
  const config: Partial<Config> = {};
  before(async () => {
    anthropic = await startAnthropicEmulator({ clock: () => clock.now(), stepEveryRetrieves: 1 });
    openai = await startOpenAIEmulator({ clock: () => clock.now(), endOnRetrieve: true });
    const base = testConfig();
    config.providers = {
      ...base.providers,
      anthropic: { apiKey: anthropic.apiKey, baseUrl: anthropic.url, version: '2023-06-01' },
      openai: { apiKey: openai.apiKey, baseUrl: openai.baseURL },
    };
    config.pipeline = { ...base.pipeline, batchMaxWaitMs: 0 };
  });
  after(async () => {
    await anthropic?.close();
    await openai?.close();
  });
  const started = <T>(emulator: T | undefined): T => {
    if (emulator === undefined) throw new Error('the emulators are used before the suite started');
    return emulator;
  };
  return {
    clock,
    h: harness(backend, { clock, config }),
    anthropic: () => started(anthropic),
    openai: () => started(openai),
  };
}
