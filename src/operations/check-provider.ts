/**
 * The read-only check of one provider's credentials (`barge provider check <name>`; an admin API
 * later): builds this deployment's providers from the config, as the workers do, and has the named
 * one try each capability it needs (provider.ts `check`). A check that ran and failed is a result
 * (`ok` false), not a refusal; a name that is no provider, or one not enabled here, is a refusal.
 * No database: the providers need only the config.
 */
import { type Config, enabledRoutes, providerEnabledBy } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { MOCK_MODEL_ID, PROVIDER_NAMES, type ProviderName } from '../domain/model-catalog.js';
import type { Provider, ProviderCapability } from '../providers/provider.js';
import { type Result, refusals, refuse, succeed } from './operation.js';

export interface CheckProviderDeps {
  config: Config;
  clock: Clock;
  /** By default the registry's, loaded on first use: it loads every provider's SDK, which no other admin command needs. */
  buildProviders?: (config: Config, clock: Clock) => Promise<Map<string, Provider>> | Map<string, Provider>;
}

export interface CheckProviderInput {
  /** A provider as model routes name it (anthropic, openai, bedrock, mock); `svc-mock` is taken for mock. */
  name: string;
}

export interface ProviderCheckReport {
  provider: ProviderName;
  /** Every capability worked. */
  ok: boolean;
  capabilities: ProviderCapability[];
}

const isProviderName = (name: string): name is ProviderName => (PROVIDER_NAMES as readonly string[]).includes(name);

export async function checkProvider(
  deps: CheckProviderDeps,
  input: CheckProviderInput,
): Promise<Result<ProviderCheckReport>> {
  // svc-mock is the name people know (the model's); routes call its provider `mock`.
  const name = input.name === MOCK_MODEL_ID ? 'mock' : input.name;
  if (!isProviderName(name)) return refuse(refusals.unknownProvider(input.name, PROVIDER_NAMES));
  if (name !== 'mock' && !enabledRoutes(deps.config.providers).providers.has(name)) {
    return refuse(refusals.providerNotEnabled(name, providerEnabledBy(deps.config, name)));
  }
  const build = deps.buildProviders ?? (await import('../providers/registry.js')).buildProviders;
  const provider = (await build(deps.config, deps.clock)).get(name);
  // enabledRoutes and the registry read the same settings: one without the other is a bug.
  if (!provider) throw new Error(`provider '${name}' is enabled, but the registry built no adapter for it`);
  const capabilities = await provider.check();
  return succeed({ provider: name, ok: capabilities.every((c) => c.ok), capabilities });
}
