/** GET /models: the models this deployment serves (the catalog's routable ones, and svc-mock), with where each goes. */
import { Type } from 'typebox';
import {
  billedPrices,
  MOCK_PRICES,
  PROVIDER_NAMES,
  REALTIME_PROVIDER,
  splitEndpointModel,
} from '../../domain/model-catalog.js';
import { allowlistOf } from '../../domain/model-policy.js';
import { type RoutingTable, routableModels } from '../../domain/model-routing.js';
import { authOf } from '../auth.js';
import { apiKeySecurity, authErrorResponses } from '../schemas.js';
import type { TypedScope } from '../typed-scope.js';

const Prices = Type.Object(
  {
    input: Type.Number(),
    output: Type.Number(),
    batch_input: Type.Number(),
    batch_output: Type.Number(),
    cache_write: Type.Number({
      description: 'A 5-minute prompt-cache write (and a write the provider does not split).',
    }),
    cache_write_1h: Type.Number({ description: 'A 1-hour prompt-cache write.' }),
    cache_read: Type.Number({ description: 'A prompt-cache read.' }),
    batch_cache_write: Type.Number(),
    batch_cache_write_1h: Type.Number(),
    batch_cache_read: Type.Number(),
  },
  {
    description:
      'US dollars per million tokens: real-time, and the batch prices barge runs at; the prices used, so a cache price the catalog leaves out shows as the input price it falls back to. Zero for every model served by the mock provider, which is never billed.',
  },
);

export const ModelsResponse = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        id: Type.String({ description: 'What to give as params.model.' }),
        provider: Type.Enum([...PROVIDER_NAMES], { description: 'The first enabled provider of its routes.' }),
        provider_model: Type.String({ description: 'The id that provider knows the model by.' }),
        max_output_tokens: Type.Union([Type.Integer(), Type.Null()], {
          description: 'The largest max_tokens accepted; null when the catalog gives none.',
        }),
        prices_usd_per_mtok: Type.Union([Prices, Type.Null()]),
      }),
    ),
  },
  {
    examples: [
      {
        data: [
          {
            id: 'svc-mock',
            provider: 'mock',
            provider_model: 'svc-mock',
            max_output_tokens: null,
            prices_usd_per_mtok: MOCK_PRICES,
          },
          {
            id: 'claude-sonnet-4-5',
            provider: 'anthropic',
            provider_model: 'claude-sonnet-4-5-20250929',
            max_output_tokens: 64000,
            prices_usd_per_mtok: {
              input: 3,
              output: 15,
              batch_input: 1.5,
              batch_output: 7.5,
              cache_write: 3.75,
              cache_write_1h: 6,
              cache_read: 0.3,
              batch_cache_write: 1.875,
              batch_cache_write_1h: 3,
              batch_cache_read: 0.15,
            },
          },
        ],
      },
    ],
  },
);

export function registerListModels(app: TypedScope, deps: { models: RoutingTable }): void {
  // The answer changes only with the config: built once.
  const data = routableModels(deps.models.catalog, deps.models.enabled).map(({ id, route }) => ({
    id,
    provider: route.provider,
    // An endpoint's route is stored as endpoint/model: the endpoint's server knows the model part.
    provider_model:
      route.provider === REALTIME_PROVIDER ? splitEndpointModel(route.providerModel).model : route.providerModel,
    max_output_tokens: route.entry?.maxOutputTokens ?? null,
    // The prices it is billed at: its own entry's, never another's that shares its route.
    prices_usd_per_mtok: billedPrices(route.provider, route.entry),
  }));
  app.get(
    '/models',
    {
      schema: {
        summary: 'List the models served here',
        description:
          "The catalog's models whose provider is enabled in this deployment, each with the route it takes, and svc-mock; only those the caller's project may use (its allowlist). A provider-qualified name (anthropic/<model>, openai/<model>, bedrock/<model id>) or a Bedrock ARN is accepted as params.model too: as the catalog model whose route it names, or, when the catalog lists none, only where BARGE_ALLOW_UNLISTED_MODELS is true.",
        tags: ['models'],
        security: apiKeySecurity,
        response: { 200: ModelsResponse, ...authErrorResponses },
      },
    },
    // Only what the caller's project may use: its allowlist against each catalog id.
    async (request) => {
      const allowed = allowlistOf(authOf(request).allowedModels);
      return { data: data.filter((m) => allowed(m.id)) };
    },
  );
}
