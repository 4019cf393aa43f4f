import { Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type RequestPayload,
} from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { errors } from '../domain/errors.js';
import type { ModelRouter } from '../providers/routing.js';
import type { NewCargo } from '../store/cargo.js';
import { findProjectConnection } from '../store/connections.js';
import type { Database } from '../store/database.js';
import { type AuthContext, Authenticator } from './auth.js';
import { registerDocs } from './docs.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling, jsonRefusal } from './errors.js';
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
        // `callback` is a union told apart by `type`: errors then name the fields of that shape.
        discriminator: true,
      },
    },
    // Failures before any route runs get the same `{detail}` bodies as the rest: a path that does
    // not decode or has a too-long parameter (routing), and requests Node's HTTP parser refuses
    // or that time out (the raw socket).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH),
    clientErrorHandler,
  });
  installErrorHandling(app, config.bodyLimitBytes);
  // JSON only: without this, Fastify's built-in text/plain parser turns a plain-text body into a
  // 400 "must be object" instead of the 415 it is.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    rawBodies.set(request, body as string);
    parseJson(request, body as string, (err, value) => {
      // Fastify's refusal no longer says why; a body that is there but refused gets the reason.
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') done(jsonRefusal(body as string));
      else done(err, value);
    });
  });
  // Bodies may be sent compressed; the parser above (and rawBodies) sees the decoded text.
  app.addHook('preParsing', async (request, _reply, payload) =>
    decodeContentEncoding(request, payload, config.bodyLimitBytes),
  );

  const authenticator = new Authenticator(deps.database, deps.clock, {
    cacheTtlMs: config.keyCacheTtlMs,
    onTouchError: (err) => app.log.warn({ err }, 'could not record last_used_at'),
  });
  await registerRateLimit(app, {
    db: deps.database.write,
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
    targets: {
      findConnection: (projectId, connectionId) => findProjectConnection(deps.database.read, projectId, connectionId),
      sqsEndpointOverride: config.awsEndpoints.sqs !== null,
      defaultRegion: config.objectStore.region,
    },
  });
  const cargoDeps = { database: deps.database, onRequest, authOf };
  registerTrackCargo(app, cargoDeps);
  registerGetCargoResult(app, cargoDeps);
  return app;
}

/** The router's limit on one path parameter; a longer one is answered 414. */
const MAX_PARAM_LENGTH = 100;

const DECODERS = new Map<string, () => Transform>([
  ['gzip', createGunzip],
  ['x-gzip', createGunzip],
  ['deflate', createInflate],
]);

/**
 * The request body as the JSON parser must see it: `Content-Encoding: gzip` or `deflate` is
 * decoded, with both the sent and the decoded size held to the body limit as it streams (a zip
 * bomb stops inflating at the limit: 413); a body that is not what its coding says is 400, and
 * any other coding 415.
 */
function decodeContentEncoding(request: FastifyRequest, payload: RequestPayload, limit: number): RequestPayload {
  const header = request.headers['content-encoding'];
  if (header === undefined) return payload;
  const { 'transfer-encoding': transferEncoding, 'content-length': contentLength } = request.headers;
  if (transferEncoding === undefined && (contentLength === undefined || contentLength === '0')) return payload;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const [coding] = codings;
  if (coding === undefined) return payload;
  const createDecoder = codings.length === 1 ? DECODERS.get(coding) : undefined;
  if (!createDecoder) throw errors.unsupportedContentEncoding(header.trim());

  const decoder = createDecoder();
  let decoded = 0;
  // Fastify matches `receivedEncodedLength` (the bytes sent) against Content-Length.
  const output = Object.assign(
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        decoded += chunk.length;
        if (decoded > limit) callback(errors.bodyTooLarge(limit));
        else callback(null, chunk);
      },
    }),
    { receivedEncodedLength: 0 },
  );
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    payload.unpipe(decoder);
    decoder.destroy();
    output.destroy(err);
    // The rest of the body is drained (and counted no further), so the answer can go out.
    payload.resume();
  };
  payload.on('data', (chunk: Buffer) => {
    if (failed) return;
    output.receivedEncodedLength += chunk.length;
    if (output.receivedEncodedLength > limit) fail(errors.bodyTooLarge(limit));
  });
  payload.on('error', fail);
  decoder.on('error', (err) => fail(errors.invalidContentEncoding(coding === 'x-gzip' ? 'gzip' : coding, err.message)));
  output.on('error', fail);
  payload.pipe(decoder).pipe(output);
  return output;
}
