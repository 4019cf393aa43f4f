/** The admin API's project routes: list, create, show, activate, deactivate, rotate the webhook secret, change settings. */
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Clock } from '../../../domain/clock.js';
import { isoTime } from '../../../domain/clock.js';
import { errors } from '../../../domain/errors.js';
import { createProject } from '../../../operations/create-project.js';
import { listProjectOverviews, showProject } from '../../../operations/project-overviews.js';
import { rotateWebhookSecret } from '../../../operations/rotate-webhook-secret.js';
import { setProjectActive } from '../../../operations/set-project-active.js';
import { updateProject } from '../../../operations/update-project.js';
import type { Database } from '../../../store/database.js';
import type { TypedScope } from '../../typed-scope.js';
import { adminOf } from '../auth.js';
import { assertProjectVisible, outcome } from '../refusals.js';
import {
  adminAuthErrorResponses,
  adminTokenSecurity,
  errorExample,
  invalidBodyResponse,
  ProjectBody,
  projectExample,
  projectJson,
  projectNotFoundResponse,
  SlugParams,
} from '../schemas.js';

export interface ProjectRoutesDeps {
  database: Database;
  clock: Clock;
  config: Pick<Config, 'secretKey'>;
}

const tags = ['admin: projects'];
const security = adminTokenSecurity;
const ProjectResponse = { ...ProjectBody, examples: [projectExample] };

export function registerProjectRoutes(scope: TypedScope, deps: ProjectRoutesDeps): void {
  /** The project with its counts, as every route of one project answers. */
  const shown = async (slug: string) => projectJson(outcome(await showProject(deps, { slug })));

  scope.get(
    '/projects',
    {
      schema: {
        summary: 'List projects',
        description:
          'Every project an all-projects token sees, by slug; a project-limited token sees its own project only. Each with its status, settings and cargo counts by status.',
        tags,
        security,
        response: {
          200: Type.Object({ data: Type.Array(ProjectBody) }, { examples: [{ data: [projectExample] }] }),
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const caller = adminOf(request);
      const listed = outcome(await listProjectOverviews(deps, caller.project ? { slug: caller.project.slug } : {}));
      return { data: listed.map(projectJson) };
    },
  );

  scope.post(
    '/projects',
    {
      schema: {
        summary: 'Create a project',
        description:
          'Creates a project; its webhook signing secret is in this answer only (rotate it to get a new one). Needs an all-projects token: a project-limited one is answered 403.',
        tags,
        security,
        body: Type.Object(
          {
            slug: Type.String({
              description: 'Lowercase letters, digits and single hyphens, at most 63 characters.',
              examples: ['acme'],
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object(
            {
              ...ProjectBody.properties,
              webhook_secret: Type.String({ description: 'The signing secret of its webhooks: shown this once.' }),
            },
            {
              examples: [
                { ...projectExample, cargo_counts: {}, webhook_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
              ],
            },
          ),
          ...invalidBodyResponse(
            "Invalid request body: /slug 'Acme': use lowercase letters, digits and single hyphens (at most 63 characters).",
            'A slug that is not valid, or a body that does not match.',
          ),
          403: errorExample(
            'This admin token is limited to one project; creating a project needs an all-projects token.',
            'The token is limited to one project.',
          ),
          409: errorExample({ error: 'slug_taken', message: "Project 'acme' already exists." }, 'The slug is taken.'),
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request, reply) => {
      if (adminOf(request).project !== null) throw errors.allProjectsTokenRequired();
      const created = outcome(await createProject(deps, { slug: request.body.slug }));
      reply.code(201);
      return { ...projectJson({ project: created, cargoCounts: {} }), webhook_secret: created.webhookSecret };
    },
  );

  scope.get(
    '/projects/:slug',
    {
      schema: {
        summary: 'Show a project',
        description: 'Its status, settings and cargo counts by status.',
        tags,
        security,
        params: SlugParams,
        response: { 200: ProjectResponse, ...projectNotFoundResponse, ...adminAuthErrorResponses },
      },
    },
    async (request) => {
      assertProjectVisible(adminOf(request), request.params.slug);
      return shown(request.params.slug);
    },
  );

  for (const [action, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    scope.post(
      `/projects/:slug/${action}`,
      {
        schema: {
          summary: active ? 'Activate a project' : 'Deactivate a project',
          description: active
            ? "Serves the project's API keys again, from the next request on in every API process."
            : 'Its API keys are answered 403 from the next request on, in every API process; no data is lost, and activating it serves them again. A project-limited token may deactivate its own project (and activate it again).',
          tags,
          security,
          params: SlugParams,
          response: { 200: ProjectResponse, ...projectNotFoundResponse, ...adminAuthErrorResponses },
        },
      },
      async (request) => {
        const { slug } = request.params;
        assertProjectVisible(adminOf(request), slug);
        outcome(await setProjectActive(deps, { slug, active }));
        return shown(slug);
      },
    );
  }

  scope.post(
    '/projects/:slug/webhook-secret/rotate',
    {
      schema: {
        summary: "Rotate a project's webhook signing secret",
        description:
          'Makes a new signing secret, shown in this answer only. The previous one keeps signing beside it (two `v1` signatures) until `previous_secret_valid_until`, so receivers switch without rejecting a delivery.',
        tags,
        security,
        params: SlugParams,
        response: {
          200: Type.Object(
            {
              project: ProjectBody,
              webhook_secret: Type.String({ description: 'The new signing secret: shown this once.' }),
              previous_secret_valid_until: Type.String({
                description: 'Until when the previous secret signs too, ISO 8601, UTC.',
              }),
            },
            {
              examples: [
                {
                  project: projectExample,
                  webhook_secret: 'whsec_Q2hhbmdlZCBzZWNyZXQgZm9yIHRoZSBleGFtcGxlIQ==',
                  previous_secret_valid_until: '2026-11-22T16:02:44.000Z',
                },
              ],
            },
          ),
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const rotated = outcome(await rotateWebhookSecret(deps, { slug }));
      return {
        project: await shown(slug),
        webhook_secret: rotated.webhookSecret,
        previous_secret_valid_until: isoTime(rotated.previousSecretValidUntil),
      };
    },
  );

  const nullableNonNegative = (description: string) =>
    Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description });
  scope.patch(
    '/projects/:slug',
    {
      schema: {
        summary: "Change a project's settings",
        description:
          'Sets any of: the notification e-mail, the rate limit, the storage budget, the model allowlist, the spend budget. A field left out stays as it is; null returns it to the default (no e-mail, the configured limit or budget, every model). Every field is checked before any is changed: a refusal changes nothing. Every API process applies the change from its next request.',
        tags,
        security,
        params: SlugParams,
        body: Type.Object(
          {
            notification_email: Type.Optional(
              Type.Union([Type.String(), Type.Null()], { description: 'Where incident mail goes; null: none.' }),
            ),
            rate_limit_max: Type.Optional(
              Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
                description: 'Requests per rate-limit window; null: BARGE_RATE_LIMIT_MAX.',
              }),
            ),
            storage_budget: Type.Optional(
              Type.Object(
                {
                  daily_bytes: Type.Optional(nullableNonNegative('Bytes accepted per UTC day; null: the default.')),
                  held_bytes: Type.Optional(nullableNonNegative('Bytes held; null: the default.')),
                },
                { additionalProperties: false },
              ),
            ),
            allowed_models: Type.Optional(
              Type.Union([Type.Array(Type.String(), { minItems: 1, maxItems: 100 }), Type.Null()], {
                description: 'Model globs (`*`, `?`) the project may use; null: every model.',
              }),
            ),
            spend_budget: Type.Optional(
              Type.Union(
                [
                  Type.Object(
                    {
                      mode: Type.Literal('own'),
                      monthly_usd: Type.Number({ minimum: 0, maximum: 1e6 }),
                      daily_usd: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1e6 }), Type.Null()])),
                    },
                    { additionalProperties: false },
                  ),
                  Type.Object(
                    { mode: Type.Union([Type.Literal('none'), Type.Literal('default')]) },
                    { additionalProperties: false },
                  ),
                ],
                {
                  description:
                    "The project's own budget (USD), `none`, or `default` (BARGE_DEFAULT_MONTHLY_BUDGET_USD).",
                },
              ),
            ),
          },
          {
            additionalProperties: false,
            minProperties: 1,
            examples: [
              {
                notification_email: 'ops@acme.example',
                rate_limit_max: 600,
                storage_budget: { daily_bytes: 1073741824 },
                allowed_models: ['claude-*'],
                spend_budget: { mode: 'own', monthly_usd: 250, daily_usd: 20 },
              },
            ],
          },
        ),
        response: {
          200: ProjectResponse,
          ...invalidBodyResponse(
            "Invalid request body: /notification_email 'ops-at-acme': invalid e-mail address 'ops-at-acme'.",
            'A field that does not match, or a value refused (an e-mail address, a model pattern).',
          ),
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const body = request.body;
      const spend = body.spend_budget;
      outcome(
        await updateProject(deps, {
          slug,
          changes: {
            ...(body.notification_email === undefined ? {} : { notificationEmail: body.notification_email }),
            ...(body.rate_limit_max === undefined ? {} : { rateLimitMax: body.rate_limit_max }),
            ...(body.storage_budget === undefined
              ? {}
              : {
                  storageBudget: {
                    ...(body.storage_budget.daily_bytes === undefined
                      ? {}
                      : { dailyBytes: body.storage_budget.daily_bytes }),
                    ...(body.storage_budget.held_bytes === undefined
                      ? {}
                      : { heldBytes: body.storage_budget.held_bytes }),
                  },
                }),
            ...(body.allowed_models === undefined ? {} : { allowedModels: body.allowed_models }),
            ...(spend === undefined
              ? {}
              : {
                  spendBudget:
                    spend.mode === 'own'
                      ? { mode: 'own', monthlyUsd: spend.monthly_usd, dailyUsd: spend.daily_usd ?? null }
                      : { mode: spend.mode },
                }),
          },
        }),
        {
          paths: {
            email: '/notification_email',
            rateLimitMax: '/rate_limit_max',
            allow: '/allowed_models',
            dailyBytes: '/storage_budget/daily_bytes',
            heldBytes: '/storage_budget/held_bytes',
            monthlyUsd: '/spend_budget/monthly_usd',
            dailyUsd: '/spend_budget/daily_usd',
          },
        },
      );
      return shown(slug);
    },
  );
}
