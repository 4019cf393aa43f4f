/** The admin API's connection routes: list a project's, create, show (with the policies to hand over), delete, check. */
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Clock } from '../../../domain/clock.js';
import { nextCheckAt } from '../../../domain/connections.js';
import { checkConnection } from '../../../operations/check-connection.js';
import { createConnection } from '../../../operations/create-connection.js';
import { deleteConnection } from '../../../operations/delete-connection.js';
import { listConnections } from '../../../operations/list-connections.js';
import { connectionOf, showConnection } from '../../../operations/show-connection.js';
import type { Database } from '../../../store/database.js';
import type { TypedScope } from '../../typed-scope.js';
import { adminOf } from '../auth.js';
import {
  CheckConnectionBody,
  CheckReportBody,
  ConnectionBody,
  ConnectionDetailBody,
  ConnectionParams,
  CreateConnectionBody,
  checkReportJson,
  connectionDetailExample,
  connectionDetailJson,
  connectionExample,
  connectionJson,
  ShowConnectionQuery,
} from '../connection-schemas.js';
import { assertProjectVisible, outcome } from '../refusals.js';
import {
  adminAuthErrorResponses,
  adminTokenSecurity,
  errorExample,
  invalidBodyResponse,
  projectNotFoundResponse,
  SlugParams,
} from '../schemas.js';

export interface ConnectionRoutesDeps {
  database: Database;
  clock: Clock;
  config: Config;
}

const tags = ['admin: connections'];
const security = adminTokenSecurity;

const connectionNotFoundResponse = {
  404: errorExample(
    "No connection 'conn_01jd5q3k8m9x2v4w6y8z0a1b2c'.",
    'No such project (or one this token does not see), or no such connection in the project.',
  ),
};

/** The create body's names as the operation names its inputs. */
const CREATE_PATHS = {
  roleArn: '/role_arn',
  region: '/region',
  allow: '/allow',
  endpoint: '/endpoint',
  secretAccessKey: '/secret_access_key',
};
const CHECK_PATHS = {
  bucket: '/bucket_arn',
  keyPrefix: '/key_prefix',
  queueUrl: '/queue_url',
  topicArn: '/topic_arn',
  eventBusArn: '/event_bus_arn',
  detailType: '/detail_type',
};

export function registerConnectionRoutes(scope: TypedScope, deps: ConnectionRoutesDeps): void {
  scope.get(
    '/projects/:slug/connections',
    {
      schema: {
        summary: "List a project's connections",
        description: 'Oldest first; never their credentials.',
        tags,
        security,
        params: SlugParams,
        response: {
          200: Type.Object({ data: Type.Array(ConnectionBody) }, { examples: [{ data: [connectionExample] }] }),
          ...projectNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const { connections } = outcome(await listConnections(deps, { slug }));
      const now = deps.clock.now();
      return { data: connections.map((c) => connectionJson(c, slug, now)) };
    },
  );

  scope.post(
    '/projects/:slug/connections',
    {
      schema: {
        summary: 'Create a connection',
        description:
          'A role barge assumes (`role_arn`, with an external id barge makes up for its trust policy), or static credentials for an S3-compatible store (`access_key_id` and `secret_access_key`, usually with `endpoint`; sealed with BARGE_SECRET_KEY, never shown again). The answer carries the policies to hand the customer, as showing it does.',
        tags,
        security,
        params: SlugParams,
        body: CreateConnectionBody,
        response: {
          201: { ...ConnectionDetailBody, examples: [connectionDetailExample] },
          ...invalidBodyResponse(
            "Invalid request body: /role_arn 'arn:aws:iam::1:role/x': use arn:aws:iam::<12-digit account>:role/<name>.",
            'A role ARN, region, endpoint or allow-list entry that is not valid, neither a role nor static credentials (or both), or a body that does not match.',
          ),
          ...projectNotFoundResponse,
          422: errorExample(
            {
              error: 'secret_key_missing',
              message:
                'BARGE_SECRET_KEY must be set to store static credentials (32 bytes, e.g. from `openssl rand -hex 32`).',
            },
            'Static credentials, and no BARGE_SECRET_KEY to seal them with.',
          ),
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const body = request.body;
      const created = outcome(
        await createConnection(deps, {
          slug,
          roleArn: body.role_arn,
          accessKeyId: body.access_key_id,
          secretAccessKey: body.secret_access_key,
          endpoint: body.endpoint,
          region: body.region,
          allow: body.allow,
        }),
        { paths: CREATE_PATHS },
      );
      reply.code(201);
      const shown = outcome(await showConnection(deps, { connectionId: created.connection.id, slug }));
      return connectionDetailJson(shown, deps.clock.now());
    },
  );

  scope.get(
    '/projects/:slug/connections/:connection_id',
    {
      schema: {
        summary: 'Show a connection',
        description:
          "Its external id, standing and last failure, when the next capability check may run, and `policies`: the trust policy (barge's principal, from BARGE_AWS_PRINCIPAL_ARN, may assume the role with the external id) and the permission policy (the one write or send action on each allowed target; a bucket under `key_prefix`), ready to paste once `placeholders` are filled in.",
        tags,
        security,
        params: ConnectionParams,
        querystring: ShowConnectionQuery,
        response: {
          200: { ...ConnectionDetailBody, examples: [connectionDetailExample] },
          400: errorExample(
            "Invalid query: key_prefix 'results': must end with '/'.",
            'A key_prefix deliveries could not use, or an unknown parameter.',
          ),
          ...connectionNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug, connection_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const shown = outcome(
        await showConnection(deps, { connectionId: connection_id, slug, keyPrefix: request.query.key_prefix }),
        { query: true },
      );
      return connectionDetailJson(shown, deps.clock.now());
    },
  );

  scope.delete(
    '/projects/:slug/connections/:connection_id',
    {
      schema: {
        summary: 'Delete a connection',
        description:
          'Its pending deliveries fail at once with `connection_not_found` (one whose attempt is under way fails as that attempt ends, unless it delivered).',
        tags,
        security,
        params: ConnectionParams,
        response: {
          200: Type.Object(
            { id: Type.String(), deleted: Type.Literal(true) },
            { examples: [{ id: connectionExample.id, deleted: true }] },
          ),
          ...connectionNotFoundResponse,
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      const { slug, connection_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      outcome(await deleteConnection(deps, { connectionId: connection_id, slug }));
      return { id: connection_id, deleted: true as const };
    },
  );

  scope.post(
    '/projects/:slug/connections/:connection_id/check',
    {
      schema: {
        summary: "Check a connection's capabilities",
        description:
          'Assumes the role and writes `{key_prefix}svc-verify.json` (`bucket_arn`), or sends one message marked `barge_verification` (`queue_url`, `topic_arn`, `event_bus_arn`), reporting each capability. One check that writes or sends a minute per connection, across processes (one that could not assume the role wrote nothing and does not count; `role_only` is not limited). A check that ran and failed is a 200 with `ok` false. A passing check ends an incident.',
        tags,
        security,
        params: ConnectionParams,
        body: CheckConnectionBody,
        response: {
          200: CheckReportBody,
          ...invalidBodyResponse(
            'Invalid request body: give one target: a bucket ARN, a queue URL, a topic ARN or an event bus ARN',
            'Not exactly one target, a target or key prefix that is not valid, or a body that does not match.',
          ),
          ...connectionNotFoundResponse,
          422: errorExample(
            {
              error: 'target_not_allowed',
              message: "Bucket 'arn:aws:s3:::other' is not on the allow-list of conn_01jd5q3k8m9x2v4w6y8z0a1b2c.",
            },
            "The target is not on the connection's allow-list.",
          ),
          429: errorExample(
            {
              error: 'check_too_soon',
              message:
                'A capability check of conn_01jd5q3k8m9x2v4w6y8z0a1b2c ran less than 60 s ago (checks write a real object): wait 42 s.',
              next_check_at: '2026-11-22T10:01:00.000Z',
            },
            'A check that writes or sends ran less than a minute ago: Retry-After and `next_check_at` say when the next may run. Also: too many failed authentications (a text `detail`).',
          ),
          500: adminAuthErrorResponses[500],
          401: adminAuthErrorResponses[401],
        },
      },
    },
    async (request) => {
      const { slug, connection_id } = request.params;
      assertProjectVisible(adminOf(request), slug);
      const body = request.body;
      const checked = outcome(
        await checkConnection(deps, {
          connectionId: connection_id,
          slug,
          bucket: body.bucket_arn,
          keyPrefix: body.key_prefix,
          queueUrl: body.queue_url,
          topicArn: body.topic_arn,
          eventBusArn: body.event_bus_arn,
          detailType: body.detail_type,
          roleOnly: body.role_only === true,
        }),
        { paths: CHECK_PATHS, now: deps.clock.now() },
      );
      // Read again: whether this check counted (it wrote or sent) is on the row now.
      const { connection } = outcome(await connectionOf(deps, { connectionId: connection_id, slug }));
      return checkReportJson(checked, nextCheckAt(connection.lastCheckAt, deps.clock.now()));
    },
  );
}
