/** The admin API's API-key routes: list a project's keys, create one (shown once), deactivate one. */
import { Type } from 'typebox';
import type { Clock } from '../../../domain/clock.js';
import { createApiKey } from '../../../operations/create-api-key.js';
import { deactivateApiKey } from '../../../operations/deactivate-api-key.js';
import { listApiKeys } from '../../../operations/list-api-keys.js';
import type { Database } from '../../../store/database.js';
import type { TypedScope } from '../../typed-scope.js';
import { adminOf } from '../auth.js';
import { assertProjectVisible, outcome } from '../refusals.js';
import {
  ApiKeyBody,
  adminAuthErrorResponses,
  adminTokenSecurity,
  apiKeyExample,
  apiKeyJson,
  errorExample,
  invalidBodyResponse,
  projectNotFoundResponse,
  SlugParams,
} from '../schemas.js';

export interface ApiKeyRoutesDeps {
  database: Database;
  clock: Clock;
}

const tags = ['admin: API keys'];
const security = adminTokenSecurity;

export function registerApiKeyRoutes(scope: TypedScope, deps: ApiKeyRoutesDeps): void {
  scope.get(
    '/projects/:slug/keys',
    {
      schema: {
        summary: "List a project's API keys",
        description: 'Names, prefixes, standing, expiry and last use, oldest first; never the keys themselves.',
        tags,
        security,
        params: SlugParams,
        response: {
          200: Type.Object({ data: Type.Array(ApiKeyBody) }, { examples: [{ data: [apiKeyExample] }] }),
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const { keys } = outcome(await listApiKeys(deps, { slug }));
      return { data: keys.map(apiKeyJson) };
    },
  );

  scope.post(
    '/projects/:slug/keys',
    {
      schema: {
        summary: 'Create an API key',
        description:
          'The full key is in this answer only (it is stored as a SHA-256 hash); afterwards the list shows its prefix. Send it as X-API-Key.',
        tags,
        security,
        params: SlugParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200, description: 'A label for the key.' }),
            expires_at: Type.Optional(
              Type.String({
                description:
                  'When the key stops working: an ISO 8601 date or date-time in the future (UTC unless it names a zone).',
                examples: ['2027-01-31T00:00:00Z'],
              }),
            ),
          },
          { additionalProperties: false, examples: [{ name: 'ingest', expires_at: '2027-01-31T00:00:00Z' }] },
        ),
        response: {
          201: Type.Object(
            { ...ApiKeyBody.properties, key: Type.String({ description: 'The full key: shown this once.' }) },
            {
              examples: [{ ...apiKeyExample, last_used_at: null, key: 'barge_sk_Ab3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ' }],
            },
          ),
          ...invalidBodyResponse(
            "Invalid request body: /expires_at '2020-01-01': it is not in the future.",
            'An empty name, an expiry that is not an ISO 8601 date in the future, or a body that does not match.',
          ),
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const { name, expires_at } = request.body;
      const created = outcome(await createApiKey(deps, { slug, name, expiresAt: expires_at }));
      reply.code(201);
      return { ...apiKeyJson(created.apiKey), key: created.key };
    },
  );

  scope.post(
    '/projects/:slug/keys/:key_id/deactivate',
    {
      schema: {
        summary: 'Deactivate an API key',
        description:
          'The key is kept (its prefix still names it) and answered 401 from the next request on, in every API process.',
        tags,
        security,
        params: Type.Object({
          ...SlugParams.properties,
          key_id: Type.String({ description: 'The key id, from the list.', examples: [apiKeyExample.id] }),
        }),
        response: {
          200: { ...ApiKeyBody, examples: [{ ...apiKeyExample, is_active: false }] },
          404: errorExample(
            "No key 'key_01jd5q3m2n4p6r8t0v2x4z6b8d'.",
            'No such project (or one this token does not see), or no such key in the project.',
          ),
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug, key_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      return apiKeyJson(outcome(await deactivateApiKey(deps, { slug, keyId: key_id })));
    },
  );
}
