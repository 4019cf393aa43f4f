/** The admin API under test: tokens made by the operation, calls with a bearer token, and its authorization rules checked route by route. */
import assert from 'node:assert/strict';
import { systemClock } from '../../src/domain/clock.js';
import { createAdminToken } from '../../src/operations/create-admin-token.js';
import { revokeAdminToken } from '../../src/operations/revoke-admin-token.js';
import type { TestApp } from './app.js';
import { assertDetail } from './assertions.js';
import type { TestDatabase } from './backends.js';

/** A route as the checks take it: method, path under /admin/v1, and a body when it has one. */
export type AdminRoute = [method: string, path: string, body?: unknown];

export interface AdminClient {
  /** A new token: an all-projects one, or one limited to `slug`. */
  token(slug?: string): Promise<{ id: string; token: string }>;
  revoke(id: string): Promise<void>;
  /** `bearer` as `Authorization: Bearer …`, or `headers` of its own. */
  call(
    method: string,
    path: string,
    bearer: string | null,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
}

/** `suite` gives the suite's database and app once its `before` has run. */
export function adminClient(suite: { readonly db: TestDatabase; readonly app: TestApp }): AdminClient {
  const deps = () => ({ database: suite.db.database, clock: systemClock });
  return {
    async token(slug) {
      const made = await createAdminToken(deps(), { name: 'test', ...(slug === undefined ? {} : { slug }) });
      assert.ok(made.ok);
      return { id: made.value.adminToken.id, token: made.value.token };
    },
    async revoke(id) {
      assert.ok((await revokeAdminToken(deps(), { id })).ok);
    },
    call: (method, path, bearer, body, headers = {}) =>
      suite.app.request(method, `/admin/v1${path}`, {
        headers: bearer === null ? headers : { authorization: `Bearer ${bearer}`, ...headers },
        ...(body === undefined ? {} : { body }),
      }),
  };
}

/**
 * Every route refuses a missing, malformed (another scheme, another kind of key), unknown and
 * revoked token with 401 and a `detail`.
 */
export async function assertTokenRequired(client: AdminClient, routes: AdminRoute[]): Promise<void> {
  const revoked = await client.token();
  await client.revoke(revoked.id);
  const unknown = `barge_at_${'A'.repeat(32)}`;
  for (const [method, path, body] of routes) {
    const missing = await client.call(method, path, null, body);
    assertDetail(missing, 401, 'Missing admin token. Include the header Authorization: Bearer barge_at_….');
    for (const bad of ['barge_at_short', `barge_sk_${'A'.repeat(32)}`]) {
      assertDetail(
        await client.call(method, path, bad, body),
        401,
        'Invalid admin token format: use Authorization: Bearer barge_at_….',
      );
    }
    const basic = await client.call(method, path, null, body, { authorization: `Basic ${unknown}` });
    assert.equal(basic.status, 401, `${method} ${path}`);
    assertDetail(await client.call(method, path, unknown, body), 401, 'Invalid admin token.');
    assertDetail(await client.call(method, path, revoked.token, body), 401, 'Invalid admin token.');
  }
}

/**
 * A token limited to one project gets, on every route of `otherSlug`, exactly the 404 of a slug
 * nobody has: it learns nothing of the other project, not even that it exists.
 */
export async function assertOtherProjectHidden(
  client: AdminClient,
  limitedToken: string,
  routes: AdminRoute[],
  otherSlug: string,
): Promise<void> {
  for (const [method, path, body] of routes) {
    assertDetail(await client.call(method, path, limitedToken, body), 404, `No project '${otherSlug}'.`);
    const missing = await client.call(method, path.replace(otherSlug, 'no-such-project'), limitedToken, body);
    assert.deepEqual(missing.body, { detail: "No project 'no-such-project'." }, `${method} ${path}`);
    assert.equal(missing.status, 404, `${method} ${path}`);
  }
}
