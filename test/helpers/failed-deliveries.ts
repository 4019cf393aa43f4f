/** Cargo whose delivery failed, made fast for the bulk recovery tests: the pipeline, then the deliverer's store functions. */
import assert from 'node:assert/strict';
import type { Clock } from '../../src/domain/clock.js';
import { insertCargo } from '../../src/store/cargo/insert.js';
import type { Database } from '../../src/store/database.js';
import { findDueDeliveries, leaseDeliveries } from '../../src/store/deliveries/claim.js';
import { recordAttempts } from '../../src/store/deliveries/record-attempts.js';
import { pendingCargoRow } from './cargo-rows.js';
import { testWorker } from './pipeline.js';

/**
 * `count` cargo of the project created at each `at`, each asking for a webhook, made
 * callback_failed: a pipeline worker stores their results (and so their deliveries), then
 * refuseDeliveries fails them. Their ids, oldest first.
 */
export async function failedCargo(
  database: Database,
  clock: Clock,
  projectId: string,
  batches: { at: number; count: number }[],
): Promise<string[]> {
  const rows = batches.flatMap(({ at, count }) =>
    Array.from({ length: count }, () =>
      pendingCargoRow(projectId, { now: at, callback_url: 'http://127.0.0.1:9/gone' }),
    ),
  );
  await insertCargo(database, rows);
  const { worker } = await testWorker(database, clock, { latencyMs: 0 });
  try {
    while (await worker.pipeline?.runOnce());
  } finally {
    await worker.close();
  }
  await refuseDeliveries(database, clock, projectId);
  return rows.map((r) => r.id);
}

/**
 * Fails every due delivery of the project as the deliverer records a receiver that refuses
 * connections, through its store functions (lease, then record the one attempt, no retries):
 * trying thousands of real connections would only add seconds to a test.
 */
export async function refuseDeliveries(database: Database, clock: Clock, projectId: string): Promise<void> {
  const now = clock.now();
  const due = (await findDueDeliveries(database, { now, limit: 100_000 })).filter((d) => d.projectId === projectId);
  const lease = { workerId: 'refused', now, leaseMs: 60_000 };
  const leased = await leaseDeliveries(database, { ...lease, lease: due.map((d) => d.id), defer: [] });
  assert.equal(leased.length, due.length);
  await recordAttempts(
    database,
    leased.map((deliveryId) => ({
      deliveryId,
      workerId: lease.workerId,
      attempt: {
        trigger: 'result',
        started_at: now,
        duration_ms: 1,
        status_code: null,
        error_class: 'connection_refused',
        error_detail: 'connect ECONNREFUSED 127.0.0.1:9',
        response_excerpt: null,
      },
      verdict: { kind: 'failed' },
      now,
    })),
  );
}
