/** The API under test: a real server on loopback over a test database, and helpers for projects, keys and cargo. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { type Config, loadConfig } from '../../src/config.js';
import { type Clock, systemClock } from '../../src/domain/clock.js';
import { createService } from '../../src/service.js';
import { createApiKey } from '../../src/store/admin/api-keys.js';
import { createProject } from '../../src/store/admin/projects.js';
import type { Database } from '../../src/store/database.js';

export interface TestApp {
  app: FastifyInstance;
  url: string;
  /** fetch against the app; JSON bodies are serialized and the response body parsed. */
  request(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  close(): Promise<void>;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ BARGE_LOG_LEVEL: 'silent' }),
    keyCacheTtlMs: 0,
    ...overrides,
  };
}

/**
 * A real listening server on a loopback port over the given database: the API of a service
 * composed by createService (the same wiring as `barge serve --role api`).
 */
export async function startTestApp(
  database: Database,
  options: { config?: Partial<Config>; clock?: Clock } = {},
): Promise<TestApp> {
  const service = await createService({
    config: testConfig(options.config),
    role: 'api',
    database,
    clock: options.clock ?? systemClock,
    listen: { host: '127.0.0.1', port: 0 },
  });
  const app = service.app as FastifyInstance;
  const url = service.url as string;
  return {
    app,
    url,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key !== undefined) headers['x-api-key'] = opts.key;
      let body: string | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    close: () => service.close(),
  };
}

let projectCounter = 0;

/** Each test makes its own project, with one key. */
export async function createProjectWithKey(
  database: Database,
  options: { expiresAt?: number | null; now?: number } = {},
): Promise<{ projectId: string; slug: string; key: string; keyId: string; webhookSecret: string }> {
  const now = options.now ?? Date.now();
  const slug = `p-${process.pid}-${++projectCounter}-${Math.random().toString(36).slice(2, 8)}`;
  const project = await createProject(database, slug, now);
  if (project === 'slug_taken') throw new Error('slug collision');
  const { apiKey, key } = await createApiKey(database, {
    projectId: project.id,
    name: 'test',
    expiresAt: options.expiresAt ?? null,
    now,
  });
  return { projectId: project.id, slug, key, keyId: apiKey.id, webhookSecret: project.webhookSecret };
}

/** POST /cargo/load that must be accepted; its cargo id. */
export async function loadCargo(app: TestApp, key: string, body: unknown): Promise<string> {
  const res = await app.request('POST', '/cargo/load', { key, body });
  assert.equal(res.status, 200, res.text);
  return res.body.cargo_id as string;
}

/** GET /cargo/{id}/result that must answer 200 (a finished cargo); its body. */
export async function fetchResult(app: TestApp, key: string, cargoId: string) {
  const res = await app.request('GET', `/cargo/${cargoId}/result`, { key });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

export const mockBody = (content = 'Hello there', extra: Record<string, unknown> = {}) => ({
  params: { model: 'svc-mock', messages: [{ role: 'user', content }] },
  ...extra,
});

/** A cargo row as stored, with what it was sent with (cargo_requests). */
export function storedCargo(database: Database, cargoId: string) {
  return database.read
    .selectFrom('cargo as c')
    .innerJoin('cargo_requests as q', 'q.cargo_id', 'c.id')
    .selectAll('c')
    .select(['q.request', 'q.metadata'])
    .where('c.id', '=', cargoId)
    .executeTakeFirstOrThrow();
}
