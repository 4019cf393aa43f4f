/** Schemas and response shapes of the admin API, shared by its routes. */
import { Type } from 'typebox';
import { isoTime } from '../../domain/clock.js';
import type { ProjectOverview } from '../../operations/project-overviews.js';
import type { ApiKey } from '../../store/admin/api-keys.js';
import { ErrorBody } from '../schemas.js';

/** Either an admin token (bearer) or the dashboard's session cookie. */
export const adminTokenSecurity: Record<string, string[]>[] = [{ adminToken: [] }, { dashboardSession: [] }];

export const errorExample = (detail: unknown, description: string) => ({
  ...ErrorBody,
  examples: [{ detail }],
  description,
});

export const adminAuthErrorResponses = {
  401: errorExample(
    'Invalid admin token.',
    'Missing, malformed, unknown or revoked admin token, or a dashboard session that has ended.',
  ),
  429: errorExample(
    'Too many requests without a valid API key from this address; retry later.',
    'Too many failed authentications from this address; Retry-After says when to try again.',
  ),
  500: errorExample('Internal server error', 'A bug; the body carries a request_id.'),
};

export const projectNotFoundResponse = {
  404: errorExample(
    "No project 'acme'.",
    'No such project, or one this token does not see (a project-limited token gets the same answer for every other project).',
  ),
};

export const SlugParams = Type.Object({
  slug: Type.String({ description: "The project's slug.", examples: ['acme'] }),
});

export const nullableInt = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });
export const nullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
export const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
export const time = (description: string) => Type.String({ description: `${description} ISO 8601, UTC.` });
export const nullableTime = (description: string) =>
  Type.Union([Type.String(), Type.Null()], { description: `${description} ISO 8601, UTC; null: never.` });

export const ProjectBody = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('inactive')], {
    description: "An inactive project's API keys are answered 403; nothing is lost.",
  }),
  notification_email: Type.Union([Type.String(), Type.Null()], {
    description: 'Where incident mail goes (a delivery connection marked failed); null: none is sent.',
  }),
  rate_limit_max: nullableInt('Requests per rate-limit window; null: the configured default (BARGE_RATE_LIMIT_MAX).'),
  storage_budget: Type.Object({
    daily_bytes: nullableInt('Bytes of cargo accepted per UTC day; null: BARGE_PROJECT_DAILY_BYTES.'),
    held_bytes: nullableInt('Bytes held (requests and results not yet purged); null: BARGE_PROJECT_HELD_BYTES.'),
  }),
  allowed_models: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'Model globs the project may use; null: every model.',
  }),
  spend_budget: Type.Object({
    mode: Type.Union([Type.Literal('default'), Type.Literal('none'), Type.Literal('own')], {
      description: '`default`: BARGE_DEFAULT_MONTHLY_BUDGET_USD; `none`: no budget; `own`: the amounts below.',
    }),
    monthly_usd: nullableNumber('Per UTC calendar month (mode own).'),
    daily_usd: nullableNumber('Per UTC day (mode own); null: none.'),
  }),
  cargo_counts: Type.Record(Type.String(), Type.Integer(), {
    description: "The project's cargo by status; a status with none is left out.",
  }),
  created_at: time('When the project was created.'),
  updated_at: time('When its settings last changed.'),
});

export const projectExample = {
  id: 'prj_01jd5q3k8m9x2v4w6y8z0a1b2c',
  slug: 'acme',
  status: 'active',
  notification_email: 'ops@acme.example',
  rate_limit_max: null,
  storage_budget: { daily_bytes: null, held_bytes: null },
  allowed_models: null,
  spend_budget: { mode: 'default', monthly_usd: null, daily_usd: null },
  cargo_counts: { pending: 2, callback_delivered: 140, callback_failed: 1 },
  created_at: '2026-11-20T09:14:03.000Z',
  updated_at: '2026-11-21T16:02:44.000Z',
};

export function projectJson({ project: p, cargoCounts }: ProjectOverview) {
  return {
    id: p.id,
    slug: p.slug,
    status: p.isActive ? ('active' as const) : ('inactive' as const),
    notification_email: p.notificationEmail,
    rate_limit_max: p.rateLimitMax,
    storage_budget: { daily_bytes: p.dailyByteBudget, held_bytes: p.heldByteBudget },
    allowed_models: p.allowedModels,
    spend_budget: { mode: p.spend.mode, monthly_usd: p.spend.monthlyUsd, daily_usd: p.spend.dailyUsd },
    cargo_counts: cargoCounts,
    created_at: isoTime(p.createdAt),
    updated_at: isoTime(p.updatedAt),
  };
}

export const ApiKeyBody = Type.Object({
  id: Type.String(),
  name: Type.String(),
  key_prefix: Type.String({ description: 'The first 12 characters of the key: what identifies it.' }),
  is_active: Type.Boolean({ description: 'A deactivated key is answered 401.' }),
  expires_at: nullableTime('When the key stops working.'),
  last_used_at: nullableTime('When the key was last used (recorded at most once a minute).'),
  created_at: time('When the key was created.'),
});

export const apiKeyExample = {
  id: 'key_01jd5q3m2n4p6r8t0v2x4z6b8d',
  name: 'ingest',
  key_prefix: 'barge_sk_Ab3',
  is_active: true,
  expires_at: '2027-01-31T00:00:00.000Z',
  last_used_at: '2026-11-21T16:05:12.000Z',
  created_at: '2026-11-20T09:15:40.000Z',
};

const maybeIso = (ms: number | null) => (ms === null ? null : isoTime(ms));

export function apiKeyJson(k: ApiKey) {
  return {
    id: k.id,
    name: k.name,
    key_prefix: k.keyPrefix,
    is_active: k.isActive,
    expires_at: maybeIso(k.expiresAt),
    last_used_at: maybeIso(k.lastUsedAt),
    created_at: isoTime(k.createdAt),
  };
}

export const invalidBodyResponse = (example: string, description: string) => ({
  400: errorExample(example, description),
});
