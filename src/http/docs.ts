/** The OpenAPI document (/openapi.json) and the interactive API docs (/docs). */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI 3.1 document is generated from the route schemas that also validate requests, and
 * the interactive docs are served from the package's own assets (no CDN).
 */
export async function registerDocs(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'barge',
        version,
        description:
          'Batch gateway for model requests: submit cargo, get results by webhook, object delivery or the mailbox.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearerApiKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              "The project's API key as `Authorization: Bearer barge_sk_…`, as the official Anthropic and OpenAI SDKs send it: taken by the provider-compatible batch endpoints (`/v1/…`).",
          },
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An admin token (`barge admin-token create`): `Authorization: Bearer barge_at_…`. It sees every project, or one.',
          },
          dashboardSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'barge_session',
            description:
              'The dashboard’s session cookie, set by `POST /admin/v1/session`: it stands for the admin token signed in with. A state-changing request with it must come from the dashboard’s own origin (`Origin`, `Sec-Fetch-Site`), else 403.',
          },
        },
      },
      tags: [
        { name: 'cargo', description: 'Submit, track and fetch results' },
        { name: 'usage', description: "The project's tokens and cost" },
        { name: 'models', description: 'The models this deployment serves' },
        { name: 'health', description: 'Liveness and readiness' },
        {
          name: 'admin: projects',
          description: 'The admin API (/admin/v1/, admin token): projects and their settings',
        },
        { name: 'admin: API keys', description: "The admin API: a project's API keys" },
        {
          name: 'admin: session',
          description: 'Signing in to the dashboard (/dashboard) with an admin token, and out',
        },
        {
          name: 'anthropic: message batches',
          description:
            "Anthropic's Message Batches API answered by barge (the SDK's base URL: barge's URL); each request a cargo of the project (docs/compat.md)",
        },
        {
          name: 'openai: files',
          description: "OpenAI's Files API for Batch input and output files (the SDK's base URL: barge's URL + /v1)",
        },
        {
          name: 'openai: batches',
          description:
            "OpenAI's Batch API over /v1/chat/completions answered by barge; each line a cargo of the project",
        },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
