/** Where failures become answers: catalogue errors as `{detail}` bodies, from routes, the router and raw sockets. */
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorDetail, errors, type FieldError } from '../domain/errors.js';
import { findPoisonedKey } from '../domain/poisoned-keys.js';
import { type AjvError, fieldErrors } from '../domain/schema-errors.js';
import { isDatabaseUnavailable } from '../store/outage.js';

function toApiError(
  error: FastifyError & { validation?: AjvError[]; validationContext?: string },
  request: FastifyRequest,
  bodyLimit: number,
): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error.validation && error.validationContext === 'querystring') {
    // A query parameter is named as it is written, not as a JSON pointer.
    return errors.invalidQuery(fieldErrors(error.validation).map((e) => ({ ...e, path: e.path.replace(/^\//, '') })));
  }
  if (error.validation) return errors.invalidBody(fieldErrors(error.validation));
  if (isDatabaseUnavailable(error)) return errors.databaseUnreachable();
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Fastify's message no longer names the type, so take it from the request.
      return errors.unsupportedMediaType(request.headers['content-type'] ?? '');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.malformedJson('the body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.malformedJson(error.message);
  }
  if (error instanceof SyntaxError) return errors.malformedJson(error.message);
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    request.log.debug({ err: error }, 'request rejected by the framework');
    return errors.requestRejected(status, error.message);
  }
  return null;
}

/** What an error is answered: status, headers and the interface document's `{detail}` body. */
export interface ErrorResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: { detail: ErrorDetail; errors?: FieldError[]; request_id?: string };
}

/**
 * The one mapping from catalogue errors to responses, for Fastify replies and raw sockets alike.
 * The code is not in the body (the interface document fixes the bodies); it goes to the log.
 */
export function errorResponse(error: ApiError): ErrorResponse {
  const { errors: fields, headers = {}, requestId } = error.extra;
  const body: ErrorResponse['body'] = { detail: error.detail };
  if (fields) body.errors = fields;
  if (requestId !== undefined) body.request_id = requestId;
  return { statusCode: error.statusCode, headers, body };
}

export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  const { statusCode, headers, body } = errorResponse(error);
  // The "request completed" line is written with reply.log: it then names the code.
  reply.log = reply.log.child({ code: error.code });
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.code(statusCode).send(body);
}

/**
 * The catalogue error a failure is answered with: its own, the framework's (validation, body
 * parsing) translated, or a logged 500 for a bug. For scopes that answer in another shape (the
 * provider-compatible endpoints), which then write the body themselves.
 */
export function apiErrorOf(error: FastifyError, request: FastifyRequest, bodyLimit: number): ApiError {
  const apiError = toApiError(error, request, request.routeOptions.bodyLimit ?? bodyLimit);
  if (apiError) return apiError;
  request.log.error({ err: error }, 'unhandled error');
  return errors.internalError(request.id);
}

function sendInternalError(reply: FastifyReply, request: FastifyRequest, error: unknown): FastifyReply {
  request.log.error({ err: error }, 'unhandled error');
  return sendApiError(reply, errors.internalError(request.id));
}

/**
 * Fastify's `frameworkErrors` option: failures found while routing, before any route or hook runs
 * (a path that does not decode, a path parameter over the router's `maxParamLength`).
 */
export function frameworkErrorHandler(
  maxParamLength: number,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    switch (error.code) {
      case 'FST_ERR_BAD_URL':
        sendApiError(reply, errors.badPathEncoding());
        return;
      case 'FST_ERR_MAX_PARAM_LENGTH':
        sendApiError(reply, errors.pathSegmentTooLong(maxParamLength));
        return;
    }
    sendInternalError(reply, request, error);
  };
}

interface ClientError extends Error {
  code?: string;
}

/** What a failure on the raw connection (found by Node's HTTP parser, or a timeout) is answered. */
export function clientErrorAnswer(error: ClientError): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      // Node counts the request line into the header size, so an oversize URL lands here too.
      return errors.headersTooLarge(maxHeaderSize);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return errors.chunkExtensionsTooLarge();
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errors.requestTimeout();
  }
  // llhttp's reasons are fixed texts such as "Invalid header token" or "Duplicate Content-Length".
  const reason = error.code?.startsWith('HPE_') ? error.message.replace(/^Parse Error:\s*/, '') : '';
  return errors.malformedHttpRequest(reason || 'the request could not be read');
}

/** A complete HTTP/1.1 response with a `{detail}` body, for a socket no Fastify reply owns. */
export function rawErrorResponse(error: ApiError): string {
  const { statusCode, headers, body } = errorResponse(error);
  const text = JSON.stringify(body);
  return [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    text,
  ].join('\r\n');
}

/** How long a socket answered by the client-error handler keeps reading before it is destroyed. */
const LINGER_MS = 1000;
const answeredSockets = new WeakSet<Socket>();

type InFlightResponse = NodeJS.EventEmitter & {
  headersSent: boolean;
  writableFinished: boolean;
  req?: { complete: boolean; method?: string; url?: string };
};

/** Writes the answer, half-closes, and keeps reading for a moment before the socket is destroyed. */
function answerAndLinger(socket: Socket, answer: ApiError): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  // Closing a socket that still has unread input makes the kernel reset the connection, which
  // can discard the answer before the client has read it (a client still sending a 100 KB URL).
  socket.end(rawErrorResponse(answer));
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Fastify's `clientErrorHandler` option (the server's `clientError` event): a request Node's HTTP
 * parser refuses, or one that timed out, never reaches Fastify, so the answer is written to the
 * socket here. Never a 5xx; nothing is written to a socket that is gone, and nothing into the
 * middle of another response.
 */
export function clientErrorHandler(this: FastifyInstance, error: ClientError, socket: Socket): void {
  // While an answered socket lingers, Node's parser reports each further chunk again.
  if (answeredSockets.has(socket)) return;
  answeredSockets.add(socket);
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const answer = clientErrorAnswer(error);
  this.log.debug({ err: error, statusCode: answer.statusCode, code: answer.code }, 'client error');
  const inFlight = (socket as Socket & { _httpMessage?: InFlightResponse | null })._httpMessage;
  if (!inFlight || inFlight.writableFinished) {
    answerAndLinger(socket, answer);
  } else if (inFlight.req?.complete === false) {
    // The failure is the in-flight request's own (its body, or its time ran out): answer in place
    // of its response if that has not started, as Node does; a started one is cut off. Its
    // "incoming request" line was logged and no "request completed" will be: this line ends it.
    const { method, url } = inFlight.req;
    this.log.info({ method, url, statusCode: answer.statusCode, code: answer.code }, 'request ended by a client error');
    if (inFlight.headersSent) socket.destroy();
    else answerAndLinger(socket, answer);
  } else {
    // A pipelined request after one still being answered: that answer goes first.
    const after = () => answerAndLinger(socket, answer);
    inFlight.once('finish', after);
    inFlight.once('close', () => {
      inFlight.removeListener('finish', after);
      if (!inFlight.writableFinished) socket.destroy();
    });
  }
}

/**
 * Why Fastify's JSON parser refused a body, which it no longer says: the syntax error, or the key
 * refused to protect against prototype pollution.
 */
export function jsonRefusal(body: string): ApiError {
  const text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return errors.malformedJson(err instanceof Error ? err.message : String(err));
  }
  return findPoisonedKey(value) ?? errors.malformedJson('it could not be parsed');
}

interface RouteMethods {
  pattern: RegExp;
  methods: Set<string>;
}

/** A route URL such as `/cargo/:cargo_id/tracking` or `/docs/static/*` as a regular expression. */
function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:\w+/g, '[^/]+')
        .replace(/\*/g, '.*'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

/**
 * The single place where failures become responses: every error body is JSON with a `detail`;
 * a bug is logged and answered 500 with the request id, never a stack trace.
 */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  const routes = new Map<string, RouteMethods>();
  app.addHook('onRoute', (route) => {
    const pattern = routePattern(route.url);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const entry = routes.get(pattern.source);
    if (entry) for (const m of methods) entry.methods.add(m);
    else routes.set(pattern.source, { pattern, methods: new Set(methods) });
  });

  /**
   * A request no route handles: 405 with `Allow` when the path is routed for other methods only,
   * else 404 (also when a route with this method answered "not found" itself, like a missing
   * file under /docs/static/*).
   */
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    // Each method has its own routing tree, so a path is routed for every method of every route
    // pattern it matches.
    const allowed = new Set<string>();
    for (const route of routes.values()) {
      if (route.pattern.test(path)) for (const m of route.methods) allowed.add(m);
    }
    if (allowed.size === 0 || allowed.has(request.method)) {
      return sendApiError(reply, errors.routeNotFound(request.method, path));
    }
    return sendApiError(reply, errors.methodNotAllowed(request.method, [...allowed].sort()));
  };

  app.setNotFoundHandler(answerUnrouted);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request, bodyLimit);
    if (!apiError) return sendInternalError(reply, request, error);
    // Fastify reads the body (and runs the root hooks) even for a request no route takes; a
    // problem with that body must not hide the 404/405 the request is.
    if (request.is404) return answerUnrouted(request, reply);
    return sendApiError(reply, apiError);
  });
}
