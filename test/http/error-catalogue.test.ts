/** The error catalogue: stable codes, the shapes of its details, no code in a body, each code in the request log. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pino from 'pino';
import { systemClock } from '../../src/domain/clock.js';
import { ApiError, errors } from '../../src/domain/errors.js';
import { buildApp } from '../../src/http/app.js';
import { errorResponse } from '../../src/http/errors.js';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { createProjectWithKey, mockBody, testConfig } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

type Catalogue = typeof errors;

/**
 * Every entry of the catalogue with its code, which is part of the server's contract (logs,
 * metrics): changing one is deliberate and shows up here. The mapped type makes a new entry
 * without a line here a type error.
 */
const ENTRIES: { [K in keyof Catalogue]: { code: string; args: Parameters<Catalogue[K]> } } = {
  missingApiKey: { code: 'missing_api_key', args: [] },
  invalidKeyFormat: { code: 'invalid_api_key_format', args: [] },
  invalidApiKey: { code: 'invalid_api_key', args: [] },
  expiredApiKey: { code: 'expired_api_key', args: [] },
  projectInactive: { code: 'project_inactive', args: [] },
  missingAdminToken: { code: 'missing_admin_token', args: [] },
  invalidAdminTokenFormat: { code: 'invalid_admin_token_format', args: [] },
  invalidAdminToken: { code: 'invalid_admin_token', args: [] },
  malformedSignInToken: { code: 'malformed_sign_in_token', args: [] },
  sessionEnded: { code: 'session_ended', args: [] },
  crossSiteRequest: { code: 'cross_site_request', args: ["its Sec-Fetch-Site header is 'cross-site'"] },
  allProjectsTokenRequired: { code: 'all_projects_token_required', args: [] },
  adminRefusal: { code: 'project_not_found', args: ['project_not_found', 404, "no project 'x'"] },
  metricsUnauthorized: { code: 'metrics_unauthorized', args: [] },
  tooManyFailedAuthentications: { code: 'auth_failures_limited', args: [30] },
  rateLimited: { code: 'rate_limited', args: [7] },
  dailyByteBudgetExceeded: { code: 'daily_byte_budget_exceeded', args: [1024, 3600] },
  heldByteBudgetExceeded: { code: 'held_byte_budget_exceeded', args: [1024, 600] },
  storageFull: { code: 'storage_full', args: [60] },
  invalidBody: { code: 'invalid_body', args: [[{ path: '/params/model', message: 'is required' }]] },
  invalidQuery: { code: 'invalid_query', args: [[{ path: 'from', message: 'is after to (2026-11-22)' }]] },
  malformedJson: { code: 'malformed_json', args: ['Unexpected end of JSON input'] },
  forbiddenJsonKey: { code: 'forbidden_json_key', args: ['__proto__', '/metadata'] },
  unsupportedMediaType: { code: 'unsupported_media_type', args: ['text/plain'] },
  bodyTooLarge: { code: 'body_too_large', args: [1024] },
  invalidContentEncoding: { code: 'invalid_content_encoding', args: ['gzip', 'incorrect header check'] },
  unsupportedContentEncoding: { code: 'unsupported_content_encoding', args: ['br'] },
  connectionNotFound: { code: 'connection_not_found', args: ['conn_x'] },
  invalidKeyPrefix: { code: 'invalid_key_prefix', args: ['results', "must end with '/'"] },
  targetNotAllowed: { code: 'target_not_allowed', args: ["Bucket 'arn:aws:s3:::other'", 'conn_x'] },
  cargoNotFound: { code: 'cargo_not_found', args: [] },
  resultNotReady: { code: 'result_not_ready', args: ['crg_01jd5q3k8m9x2v4w6y8z0a1b2c', 'processing'] },
  resultExpired: { code: 'result_expired', args: ['crg_01jd5q3k8m9x2v4w6y8z0a1b2c', 'completed'] },
  cannotCancel: { code: 'cannot_cancel', args: ['crg_01jd5q3k8m9x2v4w6y8z0a1b2c', 'processing'] },
  invalidIdempotencyKey: { code: 'invalid_idempotency_key', args: [] },
  idempotencyKeyReused: { code: 'idempotency_key_reused', args: [] },
  modelNotAllowed: { code: 'model_not_allowed', args: ['gpt-4o'] },
  budgetExceeded: {
    code: 'budget_exceeded',
    args: [{ period: 'month', budgetUsd: 10, spentUsd: 9.5, reservedUsd: 0.25 }],
  },
  unpricedModel: { code: 'unpriced_model', args: ['openai/gpt-5-preview'] },
  routeNotFound: { code: 'route_not_found', args: ['GET', '/nowhere'] },
  methodNotAllowed: { code: 'method_not_allowed', args: ['PUT', ['GET', 'HEAD']] },
  badPathEncoding: { code: 'bad_path_encoding', args: [] },
  pathSegmentTooLong: { code: 'path_segment_too_long', args: [100] },
  malformedHttpRequest: { code: 'malformed_http_request', args: ['Invalid header token'] },
  headersTooLarge: { code: 'headers_too_large', args: [16384] },
  chunkExtensionsTooLarge: { code: 'chunk_extensions_too_large', args: [] },
  requestTimeout: { code: 'request_timeout', args: [] },
  requestRejected: { code: 'request_rejected', args: [400, 'FST_ERR_SOMETHING'] },
  databaseUnreachable: { code: 'database_unreachable', args: [] },
  serverBusy: { code: 'server_busy', args: [1] },
  internalError: { code: 'internal_error', args: ['6f1c0b7e-8d4e-4a4b-9d0e-3f1f2a3b4c5d'] },
};

function build<K extends keyof Catalogue>(name: K): ApiError {
  const make = errors[name] as (...args: Parameters<Catalogue[K]>) => ApiError;
  return make(...ENTRIES[name].args);
}

const names = Object.keys(errors) as (keyof Catalogue)[];

describe('the error catalogue', () => {
  test('every entry has its stable snake_case code, and no two share one', () => {
    assert.deepEqual(Object.keys(ENTRIES).sort(), [...names].sort());
    const seen = new Map<string, string>();
    for (const name of names) {
      const error = build(name);
      assert.ok(error instanceof ApiError, name);
      assert.equal(error.code, ENTRIES[name].code, name);
      assert.match(error.code, /^[a-z]+(_[a-z]+)*$/, name);
      assert.ok(error.statusCode >= 400 && error.statusCode < 600, name);
      assert.equal(seen.get(error.code), undefined, `${name} and ${seen.get(error.code)} share ${error.code}`);
      seen.set(error.code, name);
    }
  });

  test('a structured detail (402/409/410/422, the 403 model_not_allowed) names its code as `error`; the others are strings', () => {
    for (const name of names) {
      const error = build(name);
      if ([402, 409, 410, 422].includes(error.statusCode) || error.code === 'model_not_allowed') {
        assert.equal(typeof error.detail, 'object', name);
        assert.equal((error.detail as { error: string }).error, error.code, name);
      } else {
        assert.equal(typeof error.detail, 'string', name);
      }
    }
  });

  test('the code never reaches the body', () => {
    for (const name of names) {
      const { body } = errorResponse(build(name));
      assert.ok(
        Object.keys(body).every((key) => ['detail', 'errors', 'request_id'].includes(key)),
        name,
      );
      if (typeof body.detail === 'string') assert.ok(!body.detail.includes(ENTRIES[name].code), name);
    }
  });

  test('the 409 and 410 of the mailbox come from the catalogue, with the bodies they had inline', () => {
    assert.equal(
      JSON.stringify(errorResponse(errors.resultNotReady('crg_1', 'processing')).body),
      JSON.stringify({
        detail: {
          error: 'result_not_ready',
          message: 'The result is not ready yet.',
          cargo_id: 'crg_1',
          status: 'processing',
          status_description: 'Batch is being processed by the provider',
        },
      }),
    );
    assert.equal(errors.resultNotReady('crg_1', 'pending').statusCode, 409);
    assert.equal(
      JSON.stringify(errorResponse(errors.resultExpired('crg_1', 'callback_failed')).body),
      JSON.stringify({
        detail: {
          error: 'result_expired',
          message: 'The result has expired and was purged.',
          cargo_id: 'crg_1',
          status: 'callback_failed',
        },
      }),
    );
    assert.equal(errors.resultExpired('crg_1', 'completed').statusCode, 410);
  });

  test('the 500 and the readiness 503 come from the catalogue, with the bodies they had inline', () => {
    const internal = errorResponse(errors.internalError('req-1'));
    assert.equal(internal.statusCode, 500);
    assert.equal(
      JSON.stringify(internal.body),
      JSON.stringify({ detail: 'Internal server error', request_id: 'req-1' }),
    );
    const unreachable = errorResponse(errors.databaseUnreachable());
    assert.equal(unreachable.statusCode, 503);
    assert.deepEqual(unreachable.body, { detail: 'Database is not reachable.' });
  });

  test('no error is built outside the catalogue: src/http constructs no ApiError and sends no detail of its own', () => {
    const root = join(import.meta.dirname, '../../src/http');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length > 5);
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      assert.doesNotMatch(text, /new ApiError\(/, file);
      assert.doesNotMatch(text, /\.send\(\{\s*detail/, file);
    }
  });
});

/** A pino logger writing into an array, as the request log of a real app. */
function captureLog() {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

for (const backend of await backends()) {
  describe(`error codes in the request log on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: FastifyInstance;
    const log = captureLog();
    before(async () => {
      db = await backend.create();
      app = await buildApp({
        config: testConfig(),
        database: db.database,
        clock: systemClock,
        logger: log.logger,
        writeCargo: (row) => insertCargo(db.database, [row]),
        version: '0.0.0-test',
      });
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    /** Injects one request and returns it with its "request completed" log line. */
    async function send(request: InjectOptions) {
      const from = log.lines.length;
      const res = await app.inject(request);
      const lines = log.lines.slice(from).filter((l) => l.msg === 'request completed');
      assert.equal(lines.length, 1, `one request-completed line for ${request.method} ${request.url}`);
      return { res, line: lines[0] as Record<string, any> };
    }

    test('each error response names its code on the "request completed" line; a success names none', async () => {
      const { key } = await createProjectWithKey(db.database);
      const cases: { request: InjectOptions; status: number; code: string | undefined }[] = [
        { request: { method: 'GET', url: '/cargo/crg_x/tracking' }, status: 401, code: 'missing_api_key' },
        {
          request: { method: 'GET', url: '/cargo/crg_x/tracking', headers: { 'x-api-key': 'nope' } },
          status: 401,
          code: 'invalid_api_key_format',
        },
        {
          request: { method: 'GET', url: '/cargo/crg_x/tracking', headers: { 'x-api-key': key } },
          status: 404,
          code: 'cargo_not_found',
        },
        {
          request: { method: 'POST', url: '/cargo/load', headers: { 'x-api-key': key }, payload: { params: {} } },
          status: 400,
          code: 'invalid_body',
        },
        { request: { method: 'GET', url: '/nowhere' }, status: 404, code: 'route_not_found' },
        { request: { method: 'DELETE', url: '/health' }, status: 405, code: 'method_not_allowed' },
        { request: { method: 'GET', url: '/health' }, status: 200, code: undefined },
      ];
      for (const c of cases) {
        const { res, line } = await send(c.request);
        assert.equal(res.statusCode, c.status, res.body);
        assert.equal(line.res?.statusCode, c.status);
        assert.equal(line.code, c.code, JSON.stringify(line));
      }
    });

    test('an authenticated request is logged with its project and key id (an audit trail), never the key', async () => {
      const { key, keyId, slug } = await createProjectWithKey(db.database);
      const { line } = await send({
        method: 'GET',
        url: `/cargo/crg_${'0'.repeat(26)}/tracking`,
        headers: { 'x-api-key': key },
      });
      assert.equal(line.project, slug);
      assert.equal(line.key, keyId);
      assert.ok(!JSON.stringify(log.lines).includes(key), 'the key itself is never logged');
    });

    test('a cargo without a result is answered the catalogue 409, and logged result_not_ready', async () => {
      const { key } = await createProjectWithKey(db.database);
      const loaded = await send({
        method: 'POST',
        url: '/cargo/load',
        headers: { 'x-api-key': key },
        payload: mockBody(),
      });
      assert.equal(loaded.res.statusCode, 200, loaded.res.body);
      const cargoId: string = loaded.res.json().cargo_id;
      const { res, line } = await send({
        method: 'GET',
        url: `/cargo/${cargoId}/result`,
        headers: { 'x-api-key': key },
      });
      const expected = errorResponse(errors.resultNotReady(cargoId, 'pending'));
      assert.equal(res.statusCode, expected.statusCode);
      assert.equal(res.body, JSON.stringify(expected.body));
      assert.equal(line.code, 'result_not_ready');
    });
  });
}
