/**
 * The admin API's bulk recovery: count a project's failed (or delivered) deliveries of a time
 * window, then redeliver the whole set on the server, with its progress and a cancel.
 */
import type { Clock } from '../../../domain/clock.js';
import { cancelRecovery } from '../../../operations/cancel-recovery.js';
import { countRecovery } from '../../../operations/count-recovery.js';
import { createRecovery } from '../../../operations/create-recovery.js';
import { listRecoveries, RECOVERIES_LISTED } from '../../../operations/list-recoveries.js';
import { showRecovery } from '../../../operations/show-recovery.js';
import type { Database } from '../../../store/database.js';
import type { TypedScope } from '../../typed-scope.js';
import { adminOf } from '../auth.js';
import {
  DryRunBody,
  dryRunJson,
  RecoveryBody,
  RecoveryListBody,
  RecoveryParams,
  RecoveryRequestBody,
  recoveryExample,
  recoveryJson,
} from '../recovery-schemas.js';
import { assertProjectVisible, outcome } from '../refusals.js';
import {
  adminAuthErrorResponses,
  adminTokenSecurity,
  errorExample,
  invalidBodyResponse,
  projectNotFoundResponse,
  SlugParams,
} from '../schemas.js';

export interface RecoveryRoutesDeps {
  database: Database;
  clock: Clock;
  /** Wakes this process's delivery worker, if it runs one: a recovery is due now. */
  wakeDeliveries: () => void;
}

const tags = ['admin: recovery'];
const security = adminTokenSecurity;

const windowRefused = invalidBodyResponse(
  "Invalid request body: /since 'yesterday': use an ISO 8601 date or date-time, e.g. 2026-11-22T09:00:00Z.",
  'A time that is not ISO 8601, an empty window (`since` not before `until` and now), a status other than callback_failed or callback_delivered, or a body that does not match.',
);

const recoveryNotFoundResponse = {
  404: errorExample(
    "No recovery 'rcv_01jd5s0a0b1c2d3e4f5g6h7j8k'.",
    'No such project (or one this token does not see), or no such recovery in the project.',
  ),
};

export function registerRecoveryRoutes(scope: TypedScope, deps: RecoveryRoutesDeps): void {
  scope.post(
    '/projects/:slug/recoveries/dry-run',
    {
      schema: {
        summary: 'Count a recovery',
        description:
          'How many cargo a recovery made now with this body would redeliver: the cargo created in [since, until) that are in `status` (default `callback_failed`) and still have their result. Nothing changes.',
        tags,
        security,
        params: SlugParams,
        body: RecoveryRequestBody,
        response: { 200: DryRunBody, ...windowRefused, ...projectNotFoundResponse, ...adminAuthErrorResponses },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const { status, since, until } = request.body;
      return dryRunJson(outcome(await countRecovery(deps, { slug, status, since, until })));
    },
  );

  scope.post(
    '/projects/:slug/recoveries',
    {
      schema: {
        summary: 'Recover failed deliveries',
        description:
          "Redelivers, on the server, every cargo of the set the dry run counts, fixed now: a cargo that reaches `status` later is never swept in. The service's workers go through it in bounded chunks under a lease (one that dies is taken over; no cargo is redelivered twice by one recovery), recording `done` and `redelivered` as they go. An empty set is `completed` at once.",
        tags,
        security,
        params: SlugParams,
        body: RecoveryRequestBody,
        response: {
          201: { ...RecoveryBody, examples: [{ ...recoveryExample, done: 0, redelivered: 0 }] },
          ...windowRefused,
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const { status, since, until } = request.body;
      const recovery = outcome(await createRecovery(deps, { slug, status, since, until }));
      deps.wakeDeliveries();
      reply.code(201);
      return recoveryJson(recovery, slug);
    },
  );

  scope.get(
    '/projects/:slug/recoveries',
    {
      schema: {
        summary: "List a project's recoveries",
        description: `The newest ${RECOVERIES_LISTED}, newest first, each with its progress.`,
        tags,
        security,
        params: SlugParams,
        response: { 200: RecoveryListBody, ...projectNotFoundResponse, ...adminAuthErrorResponses },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      return { data: outcome(await listRecoveries(deps, { slug })).map((r) => recoveryJson(r, slug)) };
    },
  );

  scope.get(
    '/projects/:slug/recoveries/:recovery_id',
    {
      schema: {
        summary: 'Show a recovery',
        description: 'Its window, its set (`total`) and its progress (`done`, `redelivered`).',
        tags,
        security,
        params: RecoveryParams,
        response: {
          200: { ...RecoveryBody, examples: [recoveryExample] },
          ...recoveryNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug, recovery_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      return recoveryJson(outcome(await showRecovery(deps, { slug, recoveryId: recovery_id })), slug);
    },
  );

  scope.post(
    '/projects/:slug/recoveries/:recovery_id/cancel',
    {
      schema: {
        summary: 'Cancel a recovery',
        description:
          'Stops it after the chunk under way, which the answer counts; what it redelivered stays. Canceling a canceled recovery answers it as it is.',
        tags,
        security,
        params: RecoveryParams,
        response: {
          200: {
            ...RecoveryBody,
            examples: [{ ...recoveryExample, state: 'canceled', finished_at: '2026-11-22T12:05:03.000Z' }],
          },
          ...recoveryNotFoundResponse,
          409: errorExample(
            {
              error: 'recovery_finished',
              message: "Recovery 'rcv_01jd5s0a0b1c2d3e4f5g6h7j8k' has completed: there is nothing left to cancel.",
            },
            'The recovery has completed.',
          ),
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug, recovery_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      return recoveryJson(outcome(await cancelRecovery(deps, { slug, recoveryId: recovery_id })), slug);
    },
  );
}
