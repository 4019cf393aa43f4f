/** Helpers of the delivery tests: worker config, submitting, reading deliveries and attempts, checking signatures. */
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/store/database.js';
import {
  type DueDelivery,
  findDueDeliveries,
  leaseDeliveries,
  loadLeasedDeliveries,
} from '../../src/store/deliveries/claim.js';
import { mockBody, type TestApp, testConfig } from '../helpers/app.js';
import type { ReceivedRequest } from '../helpers/receiver.js';

/** Worker config with some delivery settings changed (the rest as BARGE_* defaults). */
export function deliveryConfig(
  delivery: Partial<Config['delivery']>,
  extra: Partial<Config> = {},
): { config: Partial<Config> } {
  return { config: { ...extra, delivery: { ...testConfig().delivery, ...delivery } } };
}

/** POST /cargo/load for svc-mock; returns the cargo id. */
export async function load(app: TestApp, key: string, content: string, extra: Record<string, unknown> = {}) {
  const res = await app.request('POST', '/cargo/load', { key, body: mockBody(content, extra) });
  assert.equal(res.status, 200, res.text);
  return res.body.cargo_id as string;
}

export async function deliveriesOf(database: Database, cargoId: string) {
  return database.write
    .selectFrom('deliveries')
    .selectAll()
    .where('cargo_id', '=', cargoId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Every attempt of every delivery of a cargo, oldest first. */
export async function attemptsOfCargo(database: Database, cargoId: string) {
  return database.write
    .selectFrom('delivery_attempts as a')
    .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
    .selectAll('a')
    .where('d.cargo_id', '=', cargoId)
    .orderBy('a.started_at')
    .orderBy('a.attempt')
    .execute();
}

export async function cargoStatus(database: Database, cargoId: string): Promise<string> {
  const row = await database.write
    .selectFrom('cargo')
    .select('status')
    .where('id', '=', cargoId)
    .executeTakeFirstOrThrow();
  return row.status;
}

function signatureHeaders(post: ReceivedRequest) {
  return {
    'webhook-id': String(post.headers['webhook-id']),
    'webhook-timestamp': String(post.headers['webhook-timestamp']),
    'webhook-signature': String(post.headers['webhook-signature']),
  };
}

/** The receiver-side Standard Webhooks library accepts the POST with this secret. */
export function verifies(post: ReceivedRequest, secret: string): boolean {
  try {
    new Webhook(secret).verify(post.body, signatureHeaders(post));
    return true;
  } catch {
    return false;
  }
}

/**
 * Every POST a receiver got verifies with the project's secret, and neither the body nor any
 * header carries the secret (in its `whsec_` form or as the bare base64 key).
 */
export function assertSignedPosts(posts: readonly ReceivedRequest[], secret: string): void {
  for (const post of posts) {
    assert.ok(verifies(post, secret), `POST ${post.url} does not verify with the project's secret`);
    assertNoSecret(post.body + JSON.stringify(post.headers), secret);
  }
}

export function assertNoSecret(text: string, secret: string): void {
  assert.ok(!text.includes(secret), 'the webhook secret leaked');
  assert.ok(!text.includes(secret.replace(/^whsec_/, '')), 'the webhook secret key leaked');
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** Leases every due delivery (up to `limit`) as a worker would, without attempting any: a worker that dies next. */
export async function leaseAllDue(
  database: Database,
  input: { workerId: string; now: number; leaseMs: number; limit: number },
): Promise<DueDelivery[]> {
  const due = await findDueDeliveries(database, input);
  const won = await leaseDeliveries(database, { ...input, lease: due.map((d) => d.id), defer: [] });
  return loadLeasedDeliveries(database, won, input.workerId, input.now);
}
