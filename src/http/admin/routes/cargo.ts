/** The admin API's cargo routes: a project's cargo a page at a time, one cargo's story, and redelivering one. */
import type { Clock } from '../../../domain/clock.js';
import { listProjectCargo } from '../../../operations/list-cargo.js';
import { redeliverCargo } from '../../../operations/redeliver-cargo.js';
import { showCargo } from '../../../operations/show-cargo.js';
import type { Database } from '../../../store/database.js';
import { cargoFilterOf, LIST_LIMIT, ListQuery, ListQueryRefused } from '../../routes/list-cargo.js';
import type { TypedScope } from '../../typed-scope.js';
import { adminOf } from '../auth.js';
import {
  CargoDetailBody,
  CargoPageBody,
  CargoParams,
  cargoDetailJson,
  cargoSummaryJson,
  RedeliveryBody,
} from '../cargo-schemas.js';
import { assertProjectVisible, outcome } from '../refusals.js';
import {
  adminAuthErrorResponses,
  adminTokenSecurity,
  errorExample,
  projectNotFoundResponse,
  SlugParams,
} from '../schemas.js';

export interface CargoRoutesDeps {
  database: Database;
  clock: Clock;
  /** Wakes this process's delivery worker, if it runs one: a redelivery is due now. */
  wakeDeliveries: () => void;
}

const tags = ['admin: cargo'];
const security = adminTokenSecurity;

const cargoNotFoundResponse = {
  404: errorExample(
    "No cargo 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c'.",
    'No such project (or one this token does not see), or no such cargo in the project.',
  ),
};

export function registerCargoRoutes(scope: TypedScope, deps: CargoRoutesDeps): void {
  scope.get(
    '/projects/:slug/cargo',
    {
      schema: {
        summary: "List a project's cargo",
        description: `Newest first, ${LIST_LIMIT.default} a page by default (at most ${LIST_LIMIT.max}), with the filters and cursor of GET /cargo: \`status\`, \`model\`, \`created_after\`, \`created_before\`; the next page with \`after\` = the previous page's \`last_id\`. Each page is one range of an index, at any depth.`,
        tags,
        security,
        params: SlugParams,
        querystring: ListQuery,
        response: {
          200: CargoPageBody,
          400: ListQueryRefused,
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const filter = cargoFilterOf(request.query);
      const page = outcome(await listProjectCargo(deps, { slug, filter }));
      return {
        data: page.cargo.map(cargoSummaryJson),
        has_more: page.hasMore,
        last_id: page.cargo.at(-1)?.id ?? null,
      };
    },
  );

  scope.get(
    '/projects/:slug/cargo/:cargo_id',
    {
      schema: {
        summary: 'Show a cargo',
        description:
          'Its status history (each move with its time, as the rows record it), its batch and the provider job id, its result (never the response body), every delivery and every attempt (time, status code or error class, duration, the first bytes of the answer, trigger), and whether a redelivery would be taken now, or why not.',
        tags,
        security,
        params: CargoParams,
        response: { 200: CargoDetailBody, ...cargoNotFoundResponse, ...adminAuthErrorResponses },
      },
    },
    async (request) => {
      const { slug, cargo_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      return cargoDetailJson(outcome(await showCargo(deps, { slug, cargoId: cargo_id })));
    },
  );

  scope.post(
    '/projects/:slug/cargo/:cargo_id/redeliver',
    {
      schema: {
        summary: 'Redeliver a cargo',
        description:
          'Schedules a fresh delivery of a finished cargo on every channel it asked for; it is `callback_pending` until they end. Refused while a delivery is in progress (pending or waiting for a retry), before it has a result, once its result is purged, and for a cargo that asked for no delivery.',
        tags,
        security,
        params: CargoParams,
        response: {
          200: RedeliveryBody,
          ...cargoNotFoundResponse,
          409: errorExample(
            {
              error: 'delivery_in_progress',
              message: "Cargo 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c' has a delivery in progress.",
            },
            '`delivery_in_progress`: a delivery is pending or waiting for a retry; `result_not_ready`: no result yet; `result_purged`: the result is gone.',
          ),
          422: errorExample(
            {
              error: 'no_delivery_requested',
              message: "Cargo 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c' asked for no delivery.",
            },
            'The cargo asked for no webhook and no callback target: its result is only in the mailbox.',
          ),
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug, cargo_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const scheduled = outcome(await redeliverCargo(deps, { slug, cargoId: cargo_id }));
      deps.wakeDeliveries();
      return { cargo_id: scheduled.cargoId, channels: scheduled.channels, status: scheduled.status };
    },
  );
}
