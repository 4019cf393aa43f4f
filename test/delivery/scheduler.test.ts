/**
 * The scheduler under load, with a started worker and real time: small limits, so claims lease
 * ahead, wait for slots, and top up many times over.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { assertSignedPosts, deliveryConfig, load } from './webhook-support.js';

for (const backend of await backends()) {
  describe(`delivery scheduling on ${backend.name}`, () => {
    const h = harness(backend, { clock: systemClock });

    const worker = async (limits: { maxInFlight: number; maxPerHost: number }) =>
      (
        await h.worker({
          latencyMs: 0,
          settings: { batchMaxWaitMs: 0 },
          ...deliveryConfig(limits),
        })
      ).worker;

    async function submit(n: number, url: string): Promise<{ ids: string[]; webhookSecret: string }> {
      const { key, webhookSecret } = await createProjectWithKey(h.db.database);
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(await load(h.app, key, `load ${i}`, { callback_url: url }));
      return { ids, webhookSecret };
    }

    const statuses = async (ids: string[]) =>
      h.db.database.write.selectFrom('cargo').select(['id', 'status']).where('id', 'in', ids).execute();

    /** Each cargo reached the receiver exactly once, and each has one attempt, recorded. */
    async function assertExactlyOnce(ids: string[], received: { headers: Record<string, unknown> }[]) {
      const seen = received.map((r) => String(r.headers['idempotency-key']));
      assert.equal(new Set(seen).size, seen.length, 'a cargo was delivered twice');
      assert.deepEqual([...seen].sort(), [...ids].sort());
      const attempts = await h.db.database.write
        .selectFrom('delivery_attempts as a')
        .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
        .select(['d.cargo_id', 'a.attempt', 'a.status_code'])
        .where('d.cargo_id', 'in', ids)
        .execute();
      assert.equal(attempts.length, ids.length);
      assert.ok(attempts.every((a) => a.attempt === 1 && a.status_code === 200));
    }

    test('300 deliveries to one receiver, 4 at a time: each exactly once, none left leased', async () => {
      const receiver = await startReceiver();
      const w = await worker({ maxInFlight: 16, maxPerHost: 4 });
      try {
        const { ids, webhookSecret } = await submit(300, `${receiver.url}/h`);
        w.start();
        await eventually(
          () => statuses(ids),
          (rows) => rows.every((r) => r.status === 'callback_delivered'),
          15_000,
        );
        await assertExactlyOnce(ids, receiver.received);
        assertSignedPosts(receiver.received, webhookSecret);
        const leased = await h.db.database.write
          .selectFrom('deliveries')
          .select('id')
          .where('cargo_id', 'in', ids)
          .where('locked_by', 'is not', null)
          .execute();
        assert.deepEqual(leased, []);
      } finally {
        await w.close();
        await receiver.close();
      }
    });

    test('stopping mid-way gives back every lease, also of deliveries leased ahead; another worker finishes', async () => {
      const receiver = await startReceiver((_r, _i, res) => {
        setTimeout(() => res.writeHead(200).end(), 20);
      });
      const a = await worker({ maxInFlight: 64, maxPerHost: 4 });
      try {
        const { ids, webhookSecret } = await submit(200, `${receiver.url}/h`);
        a.start();
        await eventually(
          async () => receiver.received.length,
          (n) => n >= 40,
          10_000,
        );
        await a.close();
        const left = await h.db.database.write
          .selectFrom('deliveries')
          .select(['id', 'locked_by', 'next_attempt_at'])
          .where('cargo_id', 'in', ids)
          .where('status', '=', 'pending')
          .execute();
        assert.ok(left.length > 0, 'everything was delivered before the stop: make the receiver slower');
        assert.deepEqual(
          left.filter((d) => d.locked_by !== null),
          [],
        );
        assert.ok(
          left.every((d) => Number(d.next_attempt_at) <= Date.now()),
          'given-back deliveries are due at once',
        );

        const b = await worker({ maxInFlight: 64, maxPerHost: 4 });
        b.start();
        try {
          await eventually(
            () => statuses(ids),
            (rows) => rows.every((r) => r.status === 'callback_delivered'),
            15_000,
          );
        } finally {
          await b.close();
        }
        await assertExactlyOnce(ids, receiver.received);
        assertSignedPosts(receiver.received, webhookSecret);
      } finally {
        await a.close();
        await receiver.close();
      }
    });
  });
}
