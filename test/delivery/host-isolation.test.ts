/** The per-host delivery limit on every backend: deliveries to a healthy receiver land while a hanging one's wait. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { assertSignedPosts, deliveryConfig, load } from './webhook-support.js';

const PER_HOST = 4;
const EACH = 20;
/** The goal: a hanging receiver costs the others nothing noticeable. */
const HEALTHY_WITHIN_MS = 2000;

for (const backend of await backends()) {
  describe(`a hanging receiver does not hold up others on ${backend.name}`, () => {
    const h = harness(backend, { clock: systemClock });

    test(`${EACH} deliveries to a healthy receiver land while ${EACH} to a hanging one wait`, async () => {
      const hanging = await startReceiver(() => {});
      const healthy = await startReceiver();
      const { worker } = await h.worker({
        latencyMs: 0,
        settings: { batchMaxWaitMs: 0 },
        ...deliveryConfig({ webhookTimeoutMs: 5000, maxPerHost: PER_HOST }),
      });
      try {
        const { key, webhookSecret } = await createProjectWithKey(h.db.database);
        // The hanging receiver's cargo first, so they are due first.
        const ids: string[] = [];
        for (let i = 0; i < EACH; i++)
          ids.push(await load(h.app, key, `hang ${i}`, { callback_url: `${hanging.url}/h` }));
        for (let i = 0; i < EACH; i++)
          ids.push(await load(h.app, key, `ok ${i}`, { callback_url: `${healthy.url}/h` }));
        worker.start();

        await eventually(
          async () => healthy.received.length,
          (n) => n === EACH,
          HEALTHY_WITHIN_MS + 3000,
        );
        const results = await h.db.database.write
          .selectFrom('results')
          .select(['cargo_id', 'created_at'])
          .where('cargo_id', 'in', ids)
          .execute();
        const storedAt = Math.max(...results.map((r) => Number(r.created_at)));
        const lastHealthy = Math.max(...healthy.received.map((r) => r.at));
        assert.ok(
          lastHealthy - storedAt <= HEALTHY_WITHIN_MS,
          `the healthy deliveries took ${lastHealthy - storedAt} ms after the results were stored`,
        );
        // The hanging receiver holds at most its per-host share, and nothing of it has finished.
        assert.ok(hanging.received.length <= PER_HOST, `${hanging.received.length} requests at the hanging receiver`);
        assert.ok(hanging.received.length > 0);
        // Their attempts are recorded (a moment after the receiver answered); none of the hanging ones.
        const attempts = await eventually(
          () =>
            h.db.database.write
              .selectFrom('delivery_attempts as a')
              .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
              .innerJoin('cargo as c', 'c.id', 'd.cargo_id')
              .select(['c.callback_url', 'a.status_code'])
              .where('c.id', 'in', ids)
              .execute(),
          (rows) => rows.length >= EACH,
        );
        assert.equal(attempts.length, EACH);
        assert.ok(attempts.every((a) => a.callback_url === `${healthy.url}/h` && a.status_code === 200));
        assertSignedPosts([...healthy.received, ...hanging.received], webhookSecret);
      } finally {
        // Cut the held requests first, so stopping does not wait out the timeout.
        await hanging.close();
        await worker.close();
        await healthy.close();
      }
    });
  });
}
