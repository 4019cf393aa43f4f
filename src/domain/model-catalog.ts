/**
 * The model catalog: which model ids this deployment knows, where each may be served (routes in
 * order of preference), its output limit, prices and the parameters it refuses. Parsed and checked
 * here from the JSON text of the shipped file or the operator's BARGE_MODELS_FILE (no I/O: the
 * caller reads the file). Format (decisions.md, "Model ids and routing"):
 *
 *   {"models": [{"id", "routes": [{"provider", "model"}], "max_output_tokens"?,
 *                "prices_usd_per_mtok"?: {"input", "output", "batch_input", "batch_output",
 *                                         "cache_write"?, "cache_write_1h"?, "cache_read"?,
 *                                         "batch_cache_write"?, "batch_cache_write_1h"?, "batch_cache_read"?},
 *                "unsupported_params"?: ["temperature", ...]}],
 *    "endpoints"?: {"<name>": {"base_url", "api_key_env"?, "max_concurrency", "timeout_ms"}}}
 *
 * A route of provider `openai-compatible` names one of the endpoints (`"endpoint": "<name>"`): a
 * self-hosted OpenAI-compatible server barge runs batches against itself (decisions.md, "Batches
 * over a real-time endpoint").
 */

/** The providers a route may name; `mock` is svc-mock's. */
export const PROVIDER_NAMES = ['anthropic', 'openai', 'bedrock', 'mock', 'openai-compatible'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** The optional request parameters a model may refuse (`max_tokens` and `messages` every model takes). */
export const OPTIONAL_MODEL_PARAMS = ['system', 'temperature', 'top_p', 'top_k', 'stop_sequences'] as const;
export type OptionalModelParam = (typeof OPTIONAL_MODEL_PARAMS)[number];

/**
 * US dollars per million tokens, in the file's own shape with every price filled in: GET /models
 * shows the prices used, and cost is worked out from them (the batch prices for what barge runs,
 * the others for comparison). The cache prices are for prompt-cache writes (5-minute and 1-hour)
 * and reads; a catalog that leaves one out prices those tokens at the input price of its kind
 * (decisions.md, "The full request surface").
 */
export interface ModelPrices {
  input: number;
  output: number;
  batch_input: number;
  batch_output: number;
  cache_write: number;
  cache_write_1h: number;
  cache_read: number;
  batch_cache_write: number;
  batch_cache_write_1h: number;
  batch_cache_read: number;
}

export interface CatalogRoute {
  provider: ProviderName;
  /** The id the provider knows the model by. */
  model: string;
  /** `openai-compatible` only: the catalog endpoint that serves it. */
  endpoint?: string;
}

/** A self-hosted OpenAI-compatible server, as the catalog names it. */
export interface CatalogEndpoint {
  /** With the API version, e.g. `http://10.0.0.5:8000/v1`; no trailing slash. */
  baseUrl: string;
  /** The environment variable holding its key; null: it takes no key (and is always enabled). */
  apiKeyEnv: string | null;
  /** Requests in flight to it at once, across every worker of the deployment. */
  maxConcurrency: number;
  /** How long one request may take before it is abandoned and retried. */
  timeoutMs: number;
}

/** The provider of routes that name an endpoint. */
export const REALTIME_PROVIDER = 'openai-compatible';

/**
 * The provider model a cargo of an endpoint route is stored with: the endpoint and the model, so
 * batches (formed per provider model) never mix endpoints. Endpoint names have no `/`.
 */
export function endpointModelKey(endpoint: string, model: string): string {
  return `${endpoint}/${model}`;
}

/** The endpoint and model of an endpointModelKey. */
export function splitEndpointModel(key: string): { endpoint: string; model: string } {
  const slash = key.indexOf('/');
  return { endpoint: key.slice(0, slash), model: key.slice(slash + 1) };
}

/** The provider model a route's cargo are stored with (routes of an endpoint: endpointModelKey). */
export function routeProviderModel(route: CatalogRoute): string {
  return route.endpoint === undefined ? route.model : endpointModelKey(route.endpoint, route.model);
}

export interface CatalogEntry {
  id: string;
  /** In order of preference: a request goes to the first whose provider is enabled. */
  routes: readonly CatalogRoute[];
  /** null: the catalog gives no limit (the request schema's own bound still holds). */
  maxOutputTokens: number | null;
  prices: ModelPrices | null;
  unsupportedParams: readonly OptionalModelParam[];
}

export interface ModelCatalog {
  /** Where it was read from, for messages. */
  source: string;
  entries: readonly CatalogEntry[];
  /** The self-hosted endpoints by name (none in the shipped catalog). */
  endpoints: Readonly<Record<string, CatalogEndpoint>>;
}

/** The model id that is always there and always free; a catalog may not redefine it. */
export const MOCK_MODEL_ID = 'svc-mock';
/** svc-mock is never billed (decisions.md). */
export const MOCK_PRICES: ModelPrices = Object.freeze({
  input: 0,
  output: 0,
  batch_input: 0,
  batch_output: 0,
  cache_write: 0,
  cache_write_1h: 0,
  cache_read: 0,
  batch_cache_write: 0,
  batch_cache_write_1h: 0,
  batch_cache_read: 0,
});

/** A catalog that cannot be used; the message names the file and the entry. */
export class ModelCatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelCatalogError';
  }
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
/** What a provider's model id may look like: its own ids, inference profiles, Bedrock ARNs. */
const PROVIDER_MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,2047}$/;
/** The output limits of real models are far below this; a larger figure is a typo. */
const MAX_OUTPUT_TOKENS_LIMIT = 10_000_000;
const PRICE_FIELDS = ['input', 'output', 'batch_input', 'batch_output'] as const;
/** The optional cache prices, each with the price it defaults to. */
const CACHE_PRICE_FIELDS = {
  cache_write: 'input',
  cache_write_1h: 'input',
  cache_read: 'input',
  batch_cache_write: 'batch_input',
  batch_cache_write_1h: 'batch_input',
  batch_cache_read: 'batch_input',
} as const;
const ALL_PRICE_FIELDS: readonly string[] = [...PRICE_FIELDS, ...Object.keys(CACHE_PRICE_FIELDS)];
const ENTRY_FIELDS = ['id', 'routes', 'max_output_tokens', 'prices_usd_per_mtok', 'unsupported_params'];

/** Parses and checks a catalog; throws ModelCatalogError naming `fileName` and the entry at fault. */
export function parseModelCatalog(text: string, fileName: string): ModelCatalog {
  const fail = (where: string, problem: string): never => {
    throw new ModelCatalogError(`${fileName}: ${where}${where ? ': ' : ''}${problem}`);
  };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    return fail('', `is not valid JSON (${(err as Error).message})`);
  }
  if (!isObject(document) || !Array.isArray(document.models)) {
    return fail('', 'must be a JSON object with a "models" array');
  }
  for (const key of Object.keys(document)) {
    if (key !== 'models' && key !== 'endpoints') fail('', `unknown field "${key}" (fields: models, endpoints)`);
  }
  const endpoints = parseEndpoints(document.endpoints, fail);
  const seen = new Set<string>();
  const entries = document.models.map((raw: unknown, i: number): CatalogEntry => {
    const id = isObject(raw) && typeof raw.id === 'string' ? raw.id : undefined;
    const where = `models[${i}]${id === undefined ? '' : ` (${JSON.stringify(id)})`}`;
    const entry = parseEntry(raw, (problem) => fail(where, problem));
    if (seen.has(entry.id)) fail(where, `id duplicates an earlier entry's`);
    entry.routes.forEach((route, r) => {
      if (route.endpoint !== undefined && !(route.endpoint in endpoints)) {
        fail(where, `routes[${r}].endpoint names "${route.endpoint}", which "endpoints" does not define`);
      }
    });
    seen.add(entry.id);
    return entry;
  });
  return { source: fileName, entries, endpoints };
}

const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const ENDPOINT_FIELDS = ['base_url', 'api_key_env', 'max_concurrency', 'timeout_ms'];
/** Far above what one GPU server takes; a larger figure is a typo. */
const MAX_ENDPOINT_CONCURRENCY = 4096;
const MAX_ENDPOINT_TIMEOUT_MS = 3_600_000;

function parseEndpoints(
  raw: unknown,
  fail: (where: string, problem: string) => never,
): Record<string, CatalogEndpoint> {
  if (raw === undefined) return {};
  if (!isObject(raw)) return fail('endpoints', 'must be an object of endpoints by name');
  const endpoints: Record<string, CatalogEndpoint> = {};
  for (const [name, value] of Object.entries(raw)) {
    const where = `endpoints.${name}`;
    if (!ENDPOINT_NAME.test(name)) fail(where, 'the name must be 1-64 letters, digits and . _ -');
    if (!isObject(value)) return fail(where, `must be an object {${ENDPOINT_FIELDS.join(', ')}}`);
    for (const key of Object.keys(value)) {
      if (!ENDPOINT_FIELDS.includes(key)) fail(where, `unknown field "${key}" (fields: ${ENDPOINT_FIELDS.join(', ')})`);
    }
    const baseUrl = typeof value.base_url === 'string' ? httpBaseUrl(value.base_url) : null;
    if (baseUrl === null) fail(where, 'base_url must be an http(s) URL without query or credentials');
    const keyEnv = value.api_key_env;
    if (keyEnv !== undefined && (typeof keyEnv !== 'string' || !ENV_NAME.test(keyEnv))) {
      fail(where, 'api_key_env must be the name of an environment variable');
    }
    const integer = (field: string, max: number) => {
      const n = value[field];
      if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > max) {
        fail(where, `${field} must be an integer from 1 to ${max}`);
      }
      return n as number;
    };
    endpoints[name] = {
      baseUrl: baseUrl as string,
      apiKeyEnv: (keyEnv as string | undefined) ?? null,
      maxConcurrency: integer('max_concurrency', MAX_ENDPOINT_CONCURRENCY),
      timeoutMs: integer('timeout_ms', MAX_ENDPOINT_TIMEOUT_MS),
    };
  }
  return endpoints;
}

/** An http(s) URL without query, fragment or credentials, its trailing slashes dropped; null if not one. */
export function httpBaseUrl(raw: string): string | null {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.search || url.hash || url.username || url.password) return null;
    return raw.replace(/\/+$/, '');
  } catch {
    return null;
  }
}

function parseEntry(raw: unknown, fail: (problem: string) => never): CatalogEntry {
  if (!isObject(raw)) return fail('must be an object');
  for (const key of Object.keys(raw)) {
    if (!ENTRY_FIELDS.includes(key)) fail(`unknown field "${key}" (fields: ${ENTRY_FIELDS.join(', ')})`);
  }
  const { id } = raw;
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    fail('id must be 1-128 letters, digits and . _ : @ -, starting with a letter or digit');
  }
  const modelId = id as string;
  if (modelId === MOCK_MODEL_ID) fail(`id ${MOCK_MODEL_ID} is built in and cannot be redefined`);
  if (!Array.isArray(raw.routes) || raw.routes.length === 0) fail('routes must be a non-empty array');
  const routes = (raw.routes as unknown[]).map((route, r) =>
    parseRoute(route, (problem) => fail(`routes[${r}]${problem}`)),
  );
  const maxOutputTokens = raw.max_output_tokens;
  if (
    maxOutputTokens !== undefined &&
    (!Number.isInteger(maxOutputTokens) ||
      (maxOutputTokens as number) < 1 ||
      (maxOutputTokens as number) > MAX_OUTPUT_TOKENS_LIMIT)
  ) {
    fail(`max_output_tokens must be an integer from 1 to ${MAX_OUTPUT_TOKENS_LIMIT}`);
  }
  return {
    id: modelId,
    routes,
    maxOutputTokens: (maxOutputTokens as number | undefined) ?? null,
    prices:
      raw.prices_usd_per_mtok === undefined
        ? null
        : parsePrices(
            raw.prices_usd_per_mtok,
            fail,
            routes.every((route) => route.provider === REALTIME_PROVIDER),
          ),
    unsupportedParams: raw.unsupported_params === undefined ? [] : parseUnsupported(raw.unsupported_params, fail),
  };
}

function parseRoute(raw: unknown, fail: (problem: string) => never): CatalogRoute {
  if (!isObject(raw)) return fail(' must be an object {"provider", "model"}');
  for (const key of Object.keys(raw)) {
    if (key !== 'provider' && key !== 'model' && key !== 'endpoint') {
      fail(`: unknown field "${key}" (fields: provider, model, endpoint)`);
    }
  }
  const { provider, model, endpoint } = raw;
  if (provider === REALTIME_PROVIDER && typeof endpoint !== 'string') {
    fail(`.endpoint must name one of "endpoints" for provider ${REALTIME_PROVIDER}`);
  }
  if (provider !== REALTIME_PROVIDER && endpoint !== undefined) {
    fail(`.endpoint is only for provider ${REALTIME_PROVIDER}`);
  }
  if (typeof provider !== 'string' || !(PROVIDER_NAMES as readonly string[]).includes(provider)) {
    fail(`.provider must be one of ${PROVIDER_NAMES.join(', ')}`);
  }
  if (typeof model !== 'string' || !PROVIDER_MODEL_PATTERN.test(model)) {
    fail(".model must be the provider's model id (letters, digits and . _ : / @ + -, at most 2048)");
  }
  return {
    provider: provider as ProviderName,
    model: model as string,
    ...(typeof endpoint === 'string' && { endpoint }),
  };
}

/**
 * `realtimeOnly`: every route is an endpoint's, which is billed at the real-time prices (there is
 * no batch discount), so the batch prices may be left out.
 */
function parsePrices(raw: unknown, fail: (problem: string) => never, realtimeOnly: boolean): ModelPrices {
  if (!isObject(raw)) return fail(`prices_usd_per_mtok must be an object {${PRICE_FIELDS.join(', ')}, ...}`);
  for (const key of Object.keys(raw)) {
    if (!ALL_PRICE_FIELDS.includes(key)) {
      fail(`prices_usd_per_mtok: unknown field "${key}" (fields: ${ALL_PRICE_FIELDS.join(', ')})`);
    }
  }
  const price = (field: string) => {
    const value = raw[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      fail(`prices_usd_per_mtok.${field} must be a number >= 0 (US dollars per million tokens)`);
    }
    return value as number;
  };
  const prices = {} as ModelPrices;
  for (const field of PRICE_FIELDS) {
    const realtime = field === 'batch_input' ? 'input' : field === 'batch_output' ? 'output' : null;
    prices[field] = realtimeOnly && realtime !== null && raw[field] === undefined ? price(realtime) : price(field);
  }
  for (const [field, fallback] of Object.entries(CACHE_PRICE_FIELDS) as [keyof ModelPrices, keyof ModelPrices][]) {
    prices[field] = raw[field] === undefined ? prices[fallback] : price(field);
  }
  return prices;
}

function parseUnsupported(raw: unknown, fail: (problem: string) => never): OptionalModelParam[] {
  const allowed = OPTIONAL_MODEL_PARAMS as readonly string[];
  if (!Array.isArray(raw) || raw.some((p) => typeof p !== 'string' || !allowed.includes(p))) {
    fail(`unsupported_params must be an array of ${OPTIONAL_MODEL_PARAMS.join(', ')}`);
  }
  return [...new Set(raw as OptionalModelParam[])];
}

/** The entry with this id, if the catalog has one. */
export function catalogEntry(catalog: ModelCatalog, id: string): CatalogEntry | undefined {
  return catalog.entries.find((entry) => entry.id === id);
}

/**
 * The first entry one of whose routes is (provider, providerModel): what a provider-qualified
 * name or a stored cargo's route is known as in the catalog, if anything.
 */
export function entryForRoute(
  catalog: ModelCatalog,
  provider: string,
  providerModel: string,
): CatalogEntry | undefined {
  return catalog.entries.find((entry) =>
    entry.routes.some((route) => route.provider === provider && routeProviderModel(route) === providerModel),
  );
}

/** A stored cargo's model: the id it was submitted as, and where routing sent it. */
export interface CargoModel {
  model: string;
  provider: string;
  providerModel: string;
}

/**
 * The prices a model is billed at, from its catalog entry: none but svc-mock's zeros on the mock
 * provider (svc-mock is never billed, whatever prices an entry routed to it gives); otherwise the
 * entry's own, null when it gives none or there is no entry.
 */
export function billedPrices(provider: string, entry: CatalogEntry | null | undefined): ModelPrices | null {
  if (provider === 'mock') return MOCK_PRICES;
  const prices = entry?.prices ?? null;
  return prices !== null && provider === REALTIME_PROVIDER ? realtimePrices(prices) : prices;
}

/**
 * What an endpoint's requests are billed at: the real-time prices in the batch prices' place, as
 * barge runs them one by one (decisions.md: `cost_usd` = `standard_cost_usd`).
 */
function realtimePrices(prices: ModelPrices): ModelPrices {
  return {
    ...prices,
    batch_input: prices.input,
    batch_output: prices.output,
    batch_cache_write: prices.cache_write,
    batch_cache_write_1h: prices.cache_write_1h,
    batch_cache_read: prices.cache_read,
  };
}

/**
 * The prices a stored cargo is costed at. Prices belong to the catalog id it was submitted as,
 * never to its route's model name, which several ids may share (and one batch then carries cargo
 * of each); a provider-qualified name or ARN takes those of the entry with that route, as routing
 * does (model-routing.ts).
 */
export function pricesForCargo(catalog: ModelCatalog, cargo: CargoModel): ModelPrices | null {
  const entry = catalogEntry(catalog, cargo.model) ?? entryForRoute(catalog, cargo.provider, cargo.providerModel);
  return billedPrices(cargo.provider, entry);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
