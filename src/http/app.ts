import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { ModelRouter } from '../providers/routing.js';
import type { NewCargo } from '../store/cargo.js';
import { findProjectConnection } from '../store/connections.js';
import type { Database } from '../store/database.js';
import { type AuthContext, Authenticator } from './auth.js';
import { registerDocs } from './docs.js';
import { installErrorHandling } from './errors.js';
import { registerRateLimit } from './rate-limit.js';
import { registerGetCargoResult } from './routes/get-cargo-result.js';
import { registerHealth } from './routes/health.js';
import { registerLoadCargo } from './routes/load-cargo.js';
import { registerTrackCargo } from './routes/track-cargo.js';

export interface AppDeps {
  config: Config;
  database: Database;
  clock: Clock;
  /** A pino logger; without one, the app logs at config.logLevel on its own. */
  logger?: FastifyBaseLogger;
  models: ModelRouter;
  /** Durably stores a new cargo row; resolves once committed (the group-commit writer). */
  writeCargo: (row: NewCargo) => Promise<void>;
  version: string;
}

const authContexts = new WeakMap<FastifyRequest, AuthContext>();
/** The JSON text of each request body, for what must be echoed exactly as sent (metadata). */
const rawBodies = new WeakMap<FastifyRequest, string>();

function authOf(request: FastifyRequest): AuthContext {
  const auth = authContexts.get(request);
  if (!auth) throw new Error('route reached without authentication');
  return auth;
}

/** Builds the HTTP app from explicit dependencies; listening and signals live in src/server.ts. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    ...(deps.logger
      ? { loggerInstance: deps.logger }
      : {
          logger: {
            level: config.logLevel,
            redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
          },
        }),
    bodyLimit: config.bodyLimitBytes,
    // While shutting down, requests still arriving on open connections are served (their rows
    // commit before the writer closes) instead of getting Fastify's own 503 body without `detail`.
    return503OnClosing: false,
    // Request ids let a 500 be matched to its log line.
    requestIdHeader: false,
    genReqId: () => crypto.randomUUID(),
    ajv: {
      customOptions: {
        // Reject what does not match instead of silently dropping or converting it.
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: true,
        allErrors: true,
      },
    },
  });
  installErrorHandling(app, config.bodyLimitBytes);
  // JSON only: without this, Fastify's built-in text/plain parser turns a plain-text body into a
  // 400 "must be object" instead of the 415 it is.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    rawBodies.set(request, body as string);
    parseJson(request, body as string, done);
  });

  const authenticator = new Authenticator(deps.database.db, deps.clock, {
    cacheTtlMs: config.keyCacheTtlMs,
    onTouchError: (err) => app.log.warn({ err }, 'could not record last_used_at'),
  });
  await registerRateLimit(app, {
    db: deps.database.db,
    clock: deps.clock,
    shared: deps.database.dialect === 'postgres',
    max: config.rateLimit.max,
    windowMs: config.rateLimit.windowMs,
    projectOf: (request) => {
      const auth = authOf(request);
      return { projectId: auth.projectId, rateLimitMax: auth.rateLimitMax };
    },
  });
  await registerDocs(app, deps.version);

  // Authentication runs before the body is parsed, so the check order of section 5 holds: key
  // problems (401/403) come before body problems (400/413), then the rate limit.
  const onRequest = [
    async (request: FastifyRequest) => {
      authContexts.set(request, await authenticator.authenticate(request.headers['x-api-key']));
    },
    app.rateLimit(),
  ];

  registerHealth(app, deps);
  registerLoadCargo(app, {
    clock: deps.clock,
    models: deps.models,
    allowHttpCallbacks: config.allowPrivateCallbacks,
    writeCargo: deps.writeCargo,
    onRequest,
    authOf,
    rawBodyOf: (request) => rawBodies.get(request),
    findConnection: (projectId, connectionId) => findProjectConnection(deps.database.db, projectId, connectionId),
  });
  const cargoDeps = { database: deps.database, onRequest, authOf };
  registerTrackCargo(app, cargoDeps);
  registerGetCargoResult(app, cargoDeps);
  return app;
}
