/**
 * The checks of a cargo's request that come after its schema: the load rules, the request
 * surface, routing with the deployment's model policy, the route's parts and the model's
 * parameters; and the provider requests the cargo is stored as. POST /cargo/load and the
 * provider-compatible batch endpoints (each request of a batch is one cargo) run the same checks.
 */
import { type CargoRecord, checkLoadRules, LIMITS } from './cargo-request.js';
import type { FieldError } from './errors.js';
import { billedPrices, type ModelPrices } from './model-catalog.js';
import { checkModelParams } from './model-params.js';
import { allowlistOf, isUnlisted, policyName, unlistedMessage } from './model-policy.js';
import { type ModelRoute, type RoutingTable, routeModel } from './model-routing.js';
import { checkRequestSurface } from './request-rules.js';
import type { Message, ModelInput, ModelSettings } from './request-surface.js';
import { checkRouteParts } from './route-parts.js';

/** A schema-valid cargo body, as far as these checks look at it. */
export interface CargoBody {
  params: ModelSettings & { model: string; messages?: Message[] };
  records?: { recordId: string; modelInput: ModelSettings & { messages: Message[] } }[];
  metadata?: Record<string, unknown>;
  /** The metadata's JSON text as it will be stored. */
  metadataJson?: string;
}

export interface CargoRules {
  models: RoutingTable;
  /** BARGE_ALLOW_UNLISTED_MODELS. */
  allowUnlistedModels: boolean;
}

/**
 * Every problem of a schema-valid body (400 naming the path), and the route its model takes when
 * it has one. The project's allowlist (403) and budgets (402) come after: see `isModelAllowed`.
 */
export function checkCargoBody(
  body: CargoBody,
  rules: CargoRules,
): { problems: FieldError[]; route: ModelRoute | null } {
  const problems = checkLoadRules({
    params: body.params,
    records: body.records,
    metadata: body.metadata,
    metadataJson: body.metadataJson,
  });
  const surface = checkRequestSurface({
    params: body.params,
    records: body.records,
    defaultMaxTokens: LIMITS.defaultMaxTokens,
  });
  problems.push(...surface.problems);
  const routing = routeModel(body.params.model, rules.models.catalog, rules.models.enabled);
  if (!routing.ok) {
    problems.push({ path: '/params/model', message: routing.problem.message });
    return { problems, route: null };
  }
  if (!rules.allowUnlistedModels && isUnlisted(routing.route)) {
    problems.push({ path: '/params/model', message: unlistedMessage(body.params.model) });
  } else {
    problems.push(...checkRouteParts(routing.route.provider, surface.parts));
    problems.push(
      ...checkModelParams({
        model: body.params.model,
        route: routing.route,
        params: body.params,
        records: body.records,
      }),
    );
  }
  return { problems, route: routing.route };
}

/** Whether a project's allowlist (null: every model) lets it submit `model`, routed as `route`. */
export function isModelAllowed(allowedModels: readonly string[] | null, model: string, route: ModelRoute): boolean {
  return allowlistOf(allowedModels)(policyName(model, route));
}

/** The prices a cargo of this route is billed at, or null when none are known. */
export function routePrices(route: ModelRoute): ModelPrices | null {
  return billedPrices(route.provider, route.entry);
}

/** One provider request per record (or one for a plain cargo), with the shared settings applied. */
export function providerRequests(
  body: Pick<CargoBody, 'params' | 'records'>,
): CargoRecord[] | { modelInput: ModelInput }[] {
  const { model: _model, messages, ...shared } = body.params;
  const defaults = { ...shared, max_tokens: shared.max_tokens ?? LIMITS.defaultMaxTokens };
  if (!body.records) return [{ modelInput: { ...defaults, messages: messages as ModelInput['messages'] } }];
  return body.records.map((record) => ({
    recordId: record.recordId,
    modelInput: { ...defaults, ...record.modelInput } as ModelInput,
  }));
}
