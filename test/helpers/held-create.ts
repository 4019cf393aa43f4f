/**
 * A create call whose answer is lost, as it happens for real: `barge serve` is SIGKILLed while an
 * emulator holds its provider create call open (the provider has accepted it and made the job),
 * then a second process starts on the same database. The provider suites check what they can
 * see at the provider around it (one job ran, it was the one recorded).
 */
import assert from 'node:assert/strict';
import { hasResult } from '../../src/domain/lifecycle.js';
import type { HeldCall } from './emulator-http.js';
import type { ServeHarness } from './harness.js';
import { loadOverHttp } from './serve.js';
import { waitFor } from './wait.js';

export async function killDuringHeldCreate(
  s: ServeHarness,
  options: {
    env: Record<string, string>;
    held: HeldCall;
    key: string;
    /** Cargo bodies that go into one batch. */
    bodies: unknown[];
    /** Provider-side checks while the create is held, given barge's batch id. */
    whileHeld: (batchId: string) => void;
    timeoutMs: number;
  },
): Promise<{ batchId: string; ids: string[]; url: string }> {
  // The bodies make one batch however slowly they arrive: it forms when full, never by time.
  const env = { ...options.env, ...oneBatchOf(options.bodies.length) };
  const first = await s.serveAll(env);
  const ids: string[] = [];
  for (const body of options.bodies) ids.push(await loadOverHttp(first.url, options.key, body));
  await options.held.arrived;
  const cargo = () => s.db.database.read.selectFrom('cargo').selectAll().where('id', 'in', ids).execute();
  const batchIds = new Set((await cargo()).map((c) => c.batch_id));
  assert.equal(batchIds.size, 1, 'one batch');
  const batchId = [...batchIds][0] as string;
  options.whileHeld(batchId);
  const row = await s.db.database.read
    .selectFrom('batches')
    .selectAll()
    .where('id', '=', batchId)
    .executeTakeFirstOrThrow();
  assert.equal(row.job_id, null, 'barge has not recorded it: the answer is held');
  assert.ok(row.submit_started_at !== null, 'the submit intent is recorded');

  await first.child.stop('SIGKILL');
  options.held.release();
  const second = await s.serveAll(env);
  const rows = await waitFor('every cargo to finish', cargo, (list) => list.every((c) => hasResult(c.status)), {
    timeoutMs: options.timeoutMs,
    intervalMs: 100,
  });
  assert.deepEqual(
    rows.map((c) => c.status),
    ids.map(() => 'completed'),
  );
  return { batchId, ids, url: second.url };
}

/** Settings under which a batch forms only when it holds `count` requests (never by waiting). */
export function oneBatchOf(count: number): Record<string, string> {
  return { BARGE_BATCH_MAX_SIZE: String(count), BARGE_BATCH_MAX_WAIT_MS: '3600000' };
}

/** Each cargo's result over HTTP: a success whose response is a message. */
export async function assertAnsweredMessages(url: string, key: string, ids: string[]) {
  const bodies = [];
  for (const id of ids) {
    const res = await fetch(`${url}/cargo/${id}/result`, { headers: { 'x-api-key': key } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { success: boolean; response: { type: string; model: string } };
    assert.equal(body.success, true);
    assert.equal(body.response.type, 'message');
    bodies.push(body);
  }
  return bodies;
}
