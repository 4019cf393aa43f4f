/** The HTTP app: Fastify with its error handling, body parsing, docs, health, metrics and the cargo scope. */
import { createRequire } from 'node:module';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { type Config, enabledRoutes } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { findProjectConnection } from '../store/admin/connections.js';
import type { NewCargo } from '../store/cargo/insert.js';
import type { Database } from '../store/database.js';
import { adminRoutes } from './admin/admin-routes.js';
import { AdminAuthenticator } from './admin/auth.js';
import { Authenticator } from './auth.js';
import { AuthFailureLimiter } from './auth-failures.js';
import { cargoRoutes } from './cargo-routes.js';
import { builtDashboardDir, dashboardRoutes } from './dashboard.js';
import { diskGuard } from './disk-guard.js';
import { registerDocs } from './docs.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling } from './errors.js';
import type { RateLimitOptions } from './rate-limit.js';
import { installJsonBody } from './request-body.js';
import { registerHealth } from './routes/health.js';
import { LoadCargoBody } from './routes/load-cargo.js';
import { registerMetrics } from './routes/metrics.js';
import { SpendBudget } from './spend-budget.js';
import { installStartupGate } from './startup-gate.js';
import { StorageBudget } from './storage-budget.js';
import { AJV_OPTIONS, boundedValidatorFactory, lazyBodyValidator } from './validation.js';

export interface AppDeps {
  config: Config;
  database: Database;
  clock: Clock;
  /** A pino logger; without one, the app logs at config.logLevel on its own. */
  logger?: FastifyBaseLogger;
  /** Durably stores a new cargo row; resolves once committed (the group-commit writer). */
  writeCargo: (row: NewCargo) => Promise<void>;
  version: string;
  /** The process's metrics, served at GET /metrics. */
  metrics?: { registry: Registry; token: string | null };
  /** Whether the database is prepared; until then requests answer 503 (startup-gate.ts). Default: it is. */
  prepared?: () => boolean;
  /** A provider-compatible batch's cargo were created in one transaction (wake the batcher, count them). */
  onCargoCreated?: (routes: { provider: string; provider_model: string; count: number }[]) => void;
  /** Wakes this process's delivery worker (role all): the admin API scheduled a redelivery or a recovery. */
  wakeDeliveries?: () => void;
}

/** Builds the HTTP app from explicit dependencies; listening and signals are its caller's business. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    ...(deps.logger
      ? { loggerInstance: deps.logger }
      : {
          logger: {
            level: config.logLevel,
            redact: {
              paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
              censor: '[redacted]',
            },
          },
        }),
    bodyLimit: config.bodyLimitBytes,
    // A slow client may not hold a connection: the whole request must arrive within requestTimeout
    // (a 10 MiB body needs under 2 s at 50 Mbit/s), else it is answered 408 (clientErrorHandler);
    // a connection idle between requests is closed after as long (Node adds a second to the
    // Keep-Alive timeout it advertises). The socket's own inactivity timeout closes silently, so it
    // ends a second past the deadline: a request still arriving gets its 408 first, and a client
    // that stops reading its answer still cannot hold the connection.
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs + 1000,
    keepAliveTimeout: config.requestTimeoutMs,
    // Given to Node's server at construction too: it derives headersTimeout from requestTimeout
    // then, and checks both every connectionsCheckingInterval: well within that second.
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(500, Math.floor(config.requestTimeoutMs / 4)),
    },
    // While shutting down, requests still arriving on open connections are served (their rows
    // commit before the writer closes) instead of getting Fastify's own 503 body without `detail`.
    return503OnClosing: false,
    // Request ids let a 500 be matched to its log line.
    requestIdHeader: false,
    genReqId: () => crypto.randomUUID(),
    ajv: { customOptions: AJV_OPTIONS },
    // Failures before any route runs get the same `{detail}` bodies as the rest: a path that does
    // not decode or has a too-long parameter (routing), and requests Node's HTTP parser refuses
    // or that time out (the raw socket).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    schemaController: { compilersFactory: { buildValidator: boundedValidatorFactory() } },
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH),
    clientErrorHandler,
  });
  app.server.maxConnections = config.maxConnections;
  // An answer given before the body was read (a 401, a 413) closes the connection: reading on
  // would let an unauthenticated client keep it busy with a body it trickles.
  app.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete) reply.header('connection', 'close');
  });
  // Both before any scope is registered: scopes inherit the error handling and the body parser.
  installErrorHandling(app, config.bodyLimitBytes);
  installJsonBody(app, config.bodyLimitBytes);
  // Before the routes, so the OpenAPI document sees every one of them.
  await registerDocs(app, deps.version);
  // Before the cargo scope is registered, which inherits it.
  if (deps.prepared) installStartupGate(app, deps.prepared);

  registerHealth(app, deps);
  if (deps.metrics) registerMetrics(app, deps.metrics);
  // Routing sees the catalog and the providers whose settings are present (decisions.md).
  const models = { catalog: config.models, enabled: enabledRoutes(config.providers) };
  // One storage and one spend budget for every way cargo arrive (POST /cargo/load, the batch endpoints).
  const storage = {
    budget: new StorageBudget(deps.database, deps.clock, config.storage),
    disk: diskGuard(deps.database, config.storage),
  };
  const spend = new SpendBudget(deps.database, deps.clock, {
    defaultMonthlyUsd: config.defaultMonthlyBudgetUsd,
    checkMs: config.storage.checkMs,
  });
  // A batch's creator holds its lease while its body arrives (at most the request timeout) and a
  // while after: past it, the sweeper deletes a batch whose creation never finished.
  const compatLeaseMs = config.requestTimeoutMs + COMPAT_LEASE_MARGIN_MS;
  await app.register(cargoRoutes, {
    authenticator: new Authenticator(deps.database, deps.clock, {
      cacheTtlMs: config.keyCacheTtlMs,
      failures: new AuthFailureLimiter(config.authFailures),
      onTouchError: (err) => app.log.warn({ err }, 'could not record last_used_at'),
    }),
    database: deps.database,
    clock: deps.clock,
    bodies: { budgetBytes: config.inFlightBodyBytes, bodyLimit: config.bodyLimitBytes },
    rateLimit: {
      database: deps.database,
      clock: deps.clock,
      shared: rateLimitCounter(app, config, deps.database),
      max: config.rateLimit.max,
      windowMs: config.rateLimit.windowMs,
    },
    models,
    defaultMonthlyBudgetUsd: config.defaultMonthlyBudgetUsd,
    loadCargo: {
      clock: deps.clock,
      database: deps.database,
      models,
      allowHttpCallbacks: config.allowPrivateCallbacks,
      writeCargo: deps.writeCargo,
      targets: {
        findConnection: (projectId, connectionId) => findProjectConnection(deps.database, projectId, connectionId),
        sqsEndpointOverride: config.awsEndpoints.sqs !== null,
        defaultRegion: config.objectStore.region,
      },
      storage,
      policy: { allowUnlistedModels: config.allowUnlistedModels },
      spend,
    },
    compat: {
      database: deps.database,
      clock: deps.clock,
      intake: {
        database: deps.database,
        clock: deps.clock,
        rules: { models, allowUnlistedModels: config.allowUnlistedModels },
        validate: lazyBodyValidator(LoadCargoBody),
        storage,
        spend,
        leaseMs: compatLeaseMs,
        onCargoCreated: deps.onCargoCreated ?? (() => {}),
      },
      leaseMs: compatLeaseMs,
      explicitPublicBaseUrl: config.explicitPublicBaseUrl,
      maxRequestBytes: config.bodyLimitBytes,
      limits: config.compatLimits,
      bodyLimitBytes: config.bodyLimitBytes,
    },
  });
  // The admin API: a scope of its own beside the cargo scope, sharing none of its hooks.
  await app.register(adminRoutes, {
    prefix: '/admin/v1',
    authenticator: new AdminAuthenticator(deps.database, deps.clock, {
      failures: new AuthFailureLimiter(config.authFailures),
      onTouchError: (err) => app.log.warn({ err }, 'could not record an admin token last_used_at'),
      sessions: config.dashboardSessions,
    }),
    database: deps.database,
    clock: deps.clock,
    config,
    ...(deps.wakeDeliveries ? { wakeDeliveries: deps.wakeDeliveries } : {}),
  });
  // The dashboard's pages and assets: a third scope, whose headers touch neither of the others.
  await app.register(dashboardRoutes, { dir: builtDashboardDir() });
  return app;
}

/** How long past the request timeout a batch's creator keeps its lease. */
const COMPAT_LEASE_MARGIN_MS = 5 * 60 * 1000;

/** The router's limit on one path parameter; a longer one is answered 414. */
const MAX_PARAM_LENGTH = 100;

/** What a `--role worker` process serves when BARGE_METRICS_PORT is set: /health, /health/ready, /metrics. */
export async function buildProbeServer(deps: {
  database: Database;
  registry: Registry;
  token: string | null;
  logger: FastifyBaseLogger;
  prepared?: () => boolean;
}): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: deps.logger });
  if (deps.prepared) installStartupGate(app, deps.prepared);
  registerHealth(app, deps);
  registerMetrics(app, deps);
  return app;
}

/**
 * Where the per-project rate-limit counts live: in Redis when BARGE_REDIS_URL is set (exact, shared
 * by every process); else on PostgreSQL in the database, synced in batches (SyncedWindows); else
 * (one SQLite process) in this process's memory.
 */
function rateLimitCounter(app: FastifyInstance, config: Config, database: Database): RateLimitOptions['shared'] {
  if (config.redisUrl !== null) {
    // Loaded only when configured: most deployments have no Redis, and every start would load it.
    const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    redis.on('error', (err) => app.log.warn({ err: err.message }, 'rate-limit Redis connection failed'));
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
    return { kind: 'redis', redis };
  }
  return database.dialect === 'postgres' ? { kind: 'database' } : { kind: 'local' };
}
