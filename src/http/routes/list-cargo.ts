/** GET /cargo: the project's cargo, newest first, filtered, a cursor page at a time. */
import { type Static, Type } from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { errors, type FieldError } from '../../domain/errors.js';
import { isCargoId } from '../../domain/ids.js';
import { ALL_CARGO_STATUSES, trackingDescription } from '../../domain/lifecycle.js';
import { type CargoFilter, type ListedCargo, listCargo } from '../../store/cargo/list.js';
import type { Database } from '../../store/database.js';
import { authOf } from '../auth.js';
import { apiKeySecurity, authErrorResponses, ErrorBody } from '../schemas.js';
import type { TypedScope } from '../typed-scope.js';
import { TrackingResponse } from './track-cargo.js';

export const LIST_LIMIT = { default: 100, max: 1000 } as const;

const Timestamp = (description: string) =>
  Type.String({
    description: `${description} ISO 8601: a date-time with \`Z\` or an offset, or a date (midnight UTC).`,
    examples: ['2026-11-22T10:00:00Z'],
  });

export const ListQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(ALL_CARGO_STATUSES, { description: 'Only cargo in this status.' })),
    model: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'Only cargo submitted with this model id.' }),
    ),
    created_after: Type.Optional(Timestamp('Only cargo created after this time.')),
    created_before: Type.Optional(Timestamp('Only cargo created before this time.')),
    limit: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,7}$',
        description: `Cargo per page, 1 to ${LIST_LIMIT.max} (default ${LIST_LIMIT.default}).`,
        examples: ['100'],
      }),
    ),
    after: Type.Optional(
      Type.String({
        description: "The previous page's `last_id`: this page continues below it.",
        examples: ['crg_01jd5q3k8m9x2v4w6y8z0a1b2c'],
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListResponse = Type.Object(
  {
    data: Type.Array(TrackingResponse, {
      description: 'Tracking bodies, newest first (without `deliveries`: GET /cargo/{id}/tracking has them).',
    }),
    has_more: Type.Boolean({ description: 'Whether another page follows: ask again with `after` = `last_id`.' }),
    last_id: Type.Union([Type.String(), Type.Null()], { description: "The page's last cargo id; null when empty." }),
  },
  {
    examples: [
      {
        data: [
          {
            cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
            status: 'processing',
            status_description: 'Batch is being processed by the provider',
            created_at: '2026-11-22T10:00:00.000Z',
            updated_at: '2026-11-22T10:00:02.120Z',
          },
        ],
        has_more: true,
        last_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
      },
    ],
  },
);

/** The 400 of a list query (GET /cargo, the admin API's cargo list). */
export const ListQueryRefused = {
  ...ErrorBody,
  description:
    'An unknown status, a time that is not ISO 8601, a limit outside 1–1000, an `after` that is not a cargo id, or an unknown parameter.',
  examples: [
    {
      detail: 'Invalid query: limit must be between 1 and 1000.',
      errors: [{ path: 'limit', message: 'must be between 1 and 1000' }],
    },
  ],
};

// A date, or a date-time with seconds optional, fractions optional and a zone required.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Epoch ms of an ISO 8601 timestamp, or a field error. */
function parseTime(name: string, value: string): number | FieldError {
  const ms = ISO_8601.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms) || ms < 0) {
    return { path: name, message: `'${value}' is not an ISO 8601 time such as 2026-11-22T10:00:00Z` };
  }
  return ms;
}

/** The filter a list query asks for (GET /cargo, the admin API's cargo list), or its 400 naming every bad parameter. */
export function cargoFilterOf(query: Static<typeof ListQuery>): CargoFilter {
  const problems: FieldError[] = [];
  const filter: CargoFilter = { limit: LIST_LIMIT.default };
  if (query.status !== undefined) filter.status = query.status;
  if (query.model !== undefined) filter.model = query.model;
  for (const [name, key] of [
    ['created_after', 'createdAfter'],
    ['created_before', 'createdBefore'],
  ] as const) {
    const value = query[name];
    if (value === undefined) continue;
    const time = parseTime(name, value);
    if (typeof time === 'number') filter[key] = time;
    else problems.push(time);
  }
  if (query.limit !== undefined) {
    const limit = Number(query.limit);
    if (limit < 1 || limit > LIST_LIMIT.max) {
      problems.push({ path: 'limit', message: `must be between 1 and ${LIST_LIMIT.max}` });
    } else filter.limit = limit;
  }
  if (query.after !== undefined) {
    if (isCargoId(query.after)) filter.after = query.after;
    else problems.push({ path: 'after', message: "must be a cargo id (a page's last_id)" });
  }
  if (problems.length > 0) throw errors.invalidQuery(problems);
  return filter;
}

/** What tracking says of a listed cargo (without its deliveries: the list does not read them). */
export function listedDescription(c: ListedCargo): string {
  return trackingDescription(c.status, { resultError: c.resultError, submitError: c.submitError, deliveries: [] });
}

export function registerListCargo(app: TypedScope, deps: { database: Database }): void {
  app.get(
    '/cargo',
    {
      schema: {
        summary: "List the project's cargo",
        description: `Newest first, ${LIST_LIMIT.default} a page by default (at most ${LIST_LIMIT.max}). Filters combine. Pages follow one another by \`after\` = the previous page's \`last_id\`; cargo loaded meanwhile never shift a later page.`,
        tags: ['cargo'],
        security: apiKeySecurity,
        querystring: ListQuery,
        response: {
          200: ListResponse,
          400: ListQueryRefused,
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const filter = cargoFilterOf(request.query);
      const page = await listCargo(deps.database, authOf(request).projectId, filter);
      return {
        data: page.cargo.map((c) => ({
          cargo_id: c.id,
          status: c.status,
          status_description: listedDescription(c),
          created_at: isoTime(c.createdAt),
          updated_at: isoTime(c.updatedAt),
        })),
        has_more: page.hasMore,
        last_id: page.cargo.at(-1)?.id ?? null,
      };
    },
  );
}
