/**
 * Model routing: where a submitted `params.model` goes, as a pure function of the catalog and the
 * providers enabled in this deployment (decisions.md, "Model ids and routing"):
 * - `svc-mock` always goes to the mock provider;
 * - a catalog id goes to its first route whose provider is enabled;
 * - `anthropic/<model>`, `openai/<model>` and `bedrock/<model id>` go to that provider as named;
 * - a Bedrock ARN (foundation-model/, inference-profile/, application-inference-profile/,
 *   provisioned-model/, custom-model/) goes to bedrock.
 * Anything else is a problem that says whether the model is unknown or its provider is not enabled.
 */
import {
  type CatalogEntry,
  type CatalogRoute,
  entryForRoute,
  MOCK_MODEL_ID,
  type ModelCatalog,
  type ProviderName,
  routeProviderModel,
} from './model-catalog.js';

/**
 * What is enabled in a deployment: the providers, and the `openai-compatible` provider's endpoints
 * by name (an endpoint is enabled on its own, by its key).
 */
export interface EnabledRoutes {
  providers: ReadonlySet<ProviderName>;
  endpoints: ReadonlySet<string>;
}

/** Whether a catalog route can be taken here: its provider enabled, and its endpoint when it names one. */
export function routeEnabled(route: CatalogRoute, enabled: EnabledRoutes): boolean {
  if (route.endpoint !== undefined) return enabled.endpoints.has(route.endpoint);
  return enabled.providers.has(route.provider);
}

/** Where a model id goes: the provider, the id that provider knows it by, and its catalog entry if any. */
export interface ModelRoute {
  provider: ProviderName;
  /** For an endpoint's route, the endpoint and the model (endpointModelKey). */
  providerModel: string;
  /** The catalog's entry for it (by id, or by a route equal to a qualified name); null when none. */
  entry: CatalogEntry | null;
}

/** What routing looks at in a deployment: its catalog and the providers enabled in it. */
export interface RoutingTable {
  catalog: ModelCatalog;
  enabled: EnabledRoutes;
}

export type RouteProblem =
  | { kind: 'unknown_model'; model: string; message: string }
  | { kind: 'provider_not_enabled'; model: string; providers: readonly ProviderName[]; message: string };

export type Routing = { ok: true; route: ModelRoute } | { ok: false; problem: RouteProblem };

/** A provider's own model id (dated ids, aliases, fine-tune names such as `ft:gpt-4o-mini:org::id`). */
const PROVIDER_MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$/;

const BEDROCK_ARN =
  /^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]+:(\d{12})?:(foundation-model|inference-profile|application-inference-profile|provisioned-model|custom-model)\/[A-Za-z0-9._:/-]+$/;

/** The prefixes of provider-qualified names. */
const QUALIFIED: readonly ProviderName[] = ['anthropic', 'openai', 'bedrock'];

function isBedrockModelArn(model: string): boolean {
  return model.length <= 2048 && BEDROCK_ARN.test(model);
}

export function routeModel(model: string, catalog: ModelCatalog, enabled: EnabledRoutes): Routing {
  if (model === MOCK_MODEL_ID) {
    return { ok: true, route: { provider: 'mock', providerModel: MOCK_MODEL_ID, entry: null } };
  }
  const entry = catalog.entries.find((e) => e.id === model);
  if (entry) {
    const route = entry.routes.find((r) => routeEnabled(r, enabled));
    if (route)
      return { ok: true, route: { provider: route.provider, providerModel: routeProviderModel(route), entry } };
    return notEnabled(model, [...new Set(entry.routes.map((r) => r.provider))]);
  }
  const named = providerNamed(model);
  if (!named) return unknown(model);
  if (!enabled.providers.has(named.provider)) return notEnabled(model, [named.provider]);
  const known = entryForRoute(catalog, named.provider, named.providerModel) ?? null;
  return { ok: true, route: { ...named, entry: known } };
}

/** The catalog's models that this deployment can serve, each with its route, after svc-mock. */
export function routableModels(catalog: ModelCatalog, enabled: EnabledRoutes): { id: string; route: ModelRoute }[] {
  const models: { id: string; route: ModelRoute }[] = [
    { id: MOCK_MODEL_ID, route: { provider: 'mock', providerModel: MOCK_MODEL_ID, entry: null } },
  ];
  for (const entry of catalog.entries) {
    const routing = routeModel(entry.id, catalog, enabled);
    if (routing.ok) models.push({ id: entry.id, route: routing.route });
  }
  return models;
}

/** The provider a qualified name or an ARN names, and the model id it hands that provider. */
function providerNamed(model: string): { provider: ProviderName; providerModel: string } | null {
  if (isBedrockModelArn(model)) return { provider: 'bedrock', providerModel: model };
  const slash = model.indexOf('/');
  if (slash < 0) return null;
  const provider = QUALIFIED.find((p) => p === model.slice(0, slash));
  const rest = model.slice(slash + 1);
  if (!provider) return null;
  if (PROVIDER_MODEL_ID.test(rest) || (provider === 'bedrock' && isBedrockModelArn(rest))) {
    return { provider, providerModel: rest };
  }
  return null;
}

function unknown(model: string): Routing {
  return {
    ok: false,
    problem: {
      kind: 'unknown_model',
      model,
      message: `'${model}' is not a known model; GET /models lists the models served here`,
    },
  };
}

function notEnabled(model: string, providers: ProviderName[]): Routing {
  const names = providers.join(' or ');
  const which = providers.length > 1 ? 'none of these providers is' : 'that provider is not';
  return {
    ok: false,
    problem: {
      kind: 'provider_not_enabled',
      model,
      providers,
      message: `'${model}' is served by ${names}, and ${which} enabled here`,
    },
  };
}
