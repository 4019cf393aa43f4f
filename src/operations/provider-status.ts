/**
 * The providers of this deployment as an operator sees them: each one barge knows, whether it is
 * enabled and by which settings (decisions.md), its batches in flight and the newest error one of
 * them holds. Read from the configuration and the batches; no provider is called (`barge provider
 * check` does that).
 */
import { type Config, enabledRoutes, providerEnabledBy } from '../config.js';
import { PROVIDER_NAMES, type ProviderName } from '../domain/model-catalog.js';
import { providerBatches } from '../store/batches/provider-status.js';
import type { OperationDeps } from './operation.js';

export interface ProviderStatus {
  name: ProviderName;
  enabled: boolean;
  /** The settings that enable it, all of them needed; empty: always enabled (svc-mock). */
  enabledBy: readonly string[];
  batchesInFlight: number;
  lastError: { message: string; at: number; batchId: string } | null;
}

export async function providerStatus(
  deps: Pick<OperationDeps, 'database'> & { config: Pick<Config, 'providers' | 'models'> },
): Promise<ProviderStatus[]> {
  const enabled = enabledRoutes(deps.config.providers).providers;
  const batches = await providerBatches(deps.database, PROVIDER_NAMES);
  return PROVIDER_NAMES.map((name) => ({
    name,
    enabled: enabled.has(name),
    enabledBy: providerEnabledBy(deps.config, name),
    batchesInFlight: batches.get(name)?.inFlight ?? 0,
    lastError: batches.get(name)?.lastError ?? null,
  }));
}
