import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errors, type FieldError } from '../domain/errors.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Turns schema-validation errors into `{path, message}` pairs that name the field. */
export function fieldErrors(validation: AjvError[]): FieldError[] {
  // A value that matches no branch of a union reports every branch; keep only the union's verdict.
  const unionPaths = validation.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath);
  const out: FieldError[] = [];
  for (const e of validation) {
    if (e.keyword !== 'anyOf' && unionPaths.some((p) => e.instancePath.startsWith(p))) continue;
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path = `${path}/${String(e.params.missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      path = `${path}/${String(e.params.additionalProperty)}`;
      message = 'is not a known field';
    } else if (e.keyword === 'anyOf') {
      message = 'does not have an accepted shape';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    }
    if (!out.some((o) => o.path === path && o.message === message)) out.push({ path, message });
  }
  return out;
}

function toApiError(
  error: FastifyError & { validation?: AjvError[] },
  request: FastifyRequest,
  bodyLimit: number,
): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error.validation) return errors.invalidBody(fieldErrors(error.validation));
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
  if (status !== undefined && status >= 400 && status < 500) return new ApiError(status, error.message);
  return null;
}

export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.extra.headers ?? {})) reply.header(name, value);
  return reply
    .code(error.statusCode)
    .send(error.extra.errors ? { detail: error.detail, errors: error.extra.errors } : { detail: error.detail });
}

/**
 * The single place where failures become responses: every error body is JSON with a `detail`;
 * a bug is logged and answered 500 with the request id, never a stack trace.
 */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(`^${route.url.replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const entry = routes.find((r) => r.pattern.source === pattern.source);
    if (entry) for (const m of methods) entry.methods.add(m);
    else routes.push({ pattern, methods: new Set(methods) });
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    const match = routes.find((r) => r.pattern.test(path));
    if (match) return sendApiError(reply, errors.methodNotAllowed(request.method, [...match.methods].sort()));
    return sendApiError(reply, errors.routeNotFound(request.method, path));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request, bodyLimit);
    if (apiError) return sendApiError(reply, apiError);
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ detail: 'Internal server error', request_id: request.id });
  });
}
