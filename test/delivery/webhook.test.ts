/**
 * Webhook delivery on every backend: the signed POST, retries on the schedule, failure classes, failed cargo,
 * restarts and lapsed leases, and a secret rotation.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { DeliveryWorker } from '../../src/delivery/worker.js';
import { ManualClock } from '../../src/domain/clock.js';
import { DEFAULT_RETRY_DELAYS_MS } from '../../src/domain/retry-schedule.js';
import type { Loop } from '../../src/loop.js';
import type { PipelineWorker } from '../../src/pipeline/worker.js';
import type { Service } from '../../src/service.js';
import { rotateWebhookSecret } from '../../src/store/admin/projects.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { freePort, waitFor } from '../helpers/wait.js';
import { WEBHOOK_PAYLOAD_KEYS } from '../helpers/wire-keys.js';
import {
  assertNoSecret,
  assertSignedPosts,
  attemptsOfCargo,
  cargoStatus,
  deliveriesOf,
  deliveryConfig,
  iso,
  leaseAllDue,
  load,
  verifies,
} from './webhook-support.js';

/** One webhook delivery as tracking shows it, but for its channel. */
interface TrackedDelivery {
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_error: string | null;
  last_status_code: number | null;
  next_attempt_at: string | null;
}

for (const backend of await backends()) {
  describe(`webhook delivery on ${backend.name}`, () => {
    // One clock for the app and every worker of this suite; tests only move it forward, and each
    // leaves no delivery pending, so no test sees another's retries.
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const h = harness(backend, { clock });

    /** Lets the batch of what was just submitted form and finish (svc-mock, no latency). */
    async function finish(worker: Service): Promise<number> {
      clock.advance(500);
      await worker.runUntilIdle();
      return clock.now();
    }

    /** Tracking shows the cargo in this status with its one delivery, a webhook, in this state; returns the body. */
    async function assertTracking(key: string, id: string, status: string, delivery: TrackedDelivery) {
      const tracking = await h.app.request('GET', `/cargo/${id}/tracking`, { key });
      assert.equal(tracking.body.status, status);
      assert.deepEqual(tracking.body.deliveries, [{ channel: 'webhook', ...delivery }]);
      return tracking.body;
    }

    /** Tracking shows the webhook delivered, with a 200, after this many attempts. */
    function assertDelivered(key: string, id: string, attempts: number) {
      return assertTracking(key, id, 'callback_delivered', {
        status: 'delivered',
        attempts,
        last_error: null,
        last_status_code: 200,
        next_attempt_at: null,
      });
    }

    test('a 200 on the first attempt delivers: one signed POST with the exact body and headers', async () => {
      const receiver = await startReceiver();
      try {
        const { worker } = await h.worker({ latencyMs: 0 });
        const { key, webhookSecret } = await createProjectWithKey(h.db.database);
        const res = await h.app.request('POST', '/cargo/load', {
          key,
          body: mockBody('deliver me', { callback_url: `${receiver.url}/hook?x=1`, metadata: { order: 'A-1' } }),
        });
        const id = res.body.cargo_id as string;
        clock.advance(500);
        await worker.runUntilIdle();

        assert.equal(receiver.received.length, 1);
        const [post] = receiver.received;
        assert.ok(post);
        assert.equal(post.method, 'POST');
        assert.equal(post.url, '/hook?x=1');
        assert.equal(post.headers['content-type'], 'application/json');
        assert.match(post.headers['user-agent'] ?? '', /^barge\//);
        assert.equal(post.headers['idempotency-key'], id);
        const payload = JSON.parse(post.body);
        assert.deepEqual(Object.keys(payload), WEBHOOK_PAYLOAD_KEYS);
        assert.equal(payload.cargo_id, id);
        assert.equal(payload.success, true);
        assert.equal(payload.error, null);
        assert.equal(payload.error_message, null);
        assert.deepEqual(payload.metadata, { order: 'A-1' });
        const mailbox = await h.app.request('GET', `/cargo/${id}/result`, { key });
        assert.deepEqual(payload.response, mailbox.body.response);

        // A receiver-side library verifies the signature; a changed body does not verify.
        const headers = {
          'webhook-id': post.headers['webhook-id'] as string,
          'webhook-timestamp': post.headers['webhook-timestamp'] as string,
          'webhook-signature': post.headers['webhook-signature'] as string,
        };
        assert.match(headers['webhook-id'], /^dlv_/);
        const wh = new Webhook(webhookSecret);
        assert.deepEqual(wh.verify(post.body, headers), payload);
        assert.throws(() => wh.verify(post.body.replace('deliver me', 'Deliver me'), headers));

        await assertDelivered(key, id, 1);
        assertSignedPosts(receiver.received, webhookSecret);
      } finally {
        await receiver.close();
      }
    });

    test('500, 500, 200: delivered on the third attempt, every attempt recorded, tracking shows the retry', async () => {
      const receiver = await startReceiver((_r, i, res) => {
        if (i < 2) res.writeHead(500, { 'content-type': 'text/plain' }).end(`throttled ${i + 1}`);
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
      });
      try {
        const { worker } = await h.worker({ latencyMs: 0 });
        const { key, webhookSecret } = await createProjectWithKey(h.db.database);
        const id = await load(h.app, key, 'retry me', { callback_url: `${receiver.url}/h`, metadata: { n: 1 } });
        const t0 = await finish(worker);
        assert.equal(receiver.received.length, 1);

        await assertTracking(key, id, 'callback_pending', {
          status: 'pending',
          attempts: 1,
          last_error: 'receiver answered HTTP 500',
          last_status_code: 500,
          next_attempt_at: iso(t0 + 30_000),
        });
        // The result is in the mailbox while the webhook is still being retried.
        assert.equal((await h.app.request('GET', `/cargo/${id}/result`, { key })).status, 200);

        clock.advance(30_000);
        await worker.runUntilIdle();
        assert.equal(receiver.received.length, 2);
        const tracking2 = await h.app.request('GET', `/cargo/${id}/tracking`, { key });
        assert.equal(tracking2.body.status, 'callback_pending');
        assert.equal(tracking2.body.deliveries[0].attempts, 2);
        assert.equal(tracking2.body.deliveries[0].last_error, 'receiver answered HTTP 500');
        assert.equal(tracking2.body.deliveries[0].next_attempt_at, iso(t0 + 30_000 + 120_000));

        clock.advance(120_000);
        await worker.runUntilIdle();
        assert.equal(receiver.received.length, 3);

        const attempts = await attemptsOfCargo(h.db.database, id);
        assert.deepEqual(
          attempts.map((a) => [
            a.attempt,
            a.status_code,
            a.error_class,
            a.response_excerpt,
            a.trigger,
            Number(a.started_at),
          ]),
          [
            [1, 500, 'http_status', 'throttled 1', 'result', t0],
            [2, 500, 'http_status', 'throttled 2', 'result', t0 + 30_000],
            [3, 200, null, 'thanks', 'result', t0 + 150_000],
          ],
        );
        for (const a of attempts) {
          assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0 && a.duration_ms < 5000, `${a.duration_ms}`);
        }
        assert.equal(attempts[0]?.error_detail, 'receiver answered HTTP 500');
        assert.equal(attempts[2]?.error_detail, null);

        // Every attempt sends the same bytes under the same message id (receivers deduplicate).
        const [first, ...rest] = receiver.received;
        for (const post of rest) {
          assert.equal(post.body, first?.body);
          assert.equal(post.headers['webhook-id'], first?.headers['webhook-id']);
        }
        await assertDelivered(key, id, 3);
        assertSignedPosts(receiver.received, webhookSecret);
      } finally {
        await receiver.close();
      }
    });

    test('always 500: 1 + 5 retries on the default schedule, then callback_failed with the result kept', async () => {
      const receiver = await startReceiver((_r, _i, res) => res.writeHead(500).end('no'));
      try {
        const { worker } = await h.worker({ latencyMs: 0 });
        const { key, webhookSecret } = await createProjectWithKey(h.db.database);
        const id = await load(h.app, key, 'never lands', { callback_url: `${receiver.url}/h` });
        const t0 = await finish(worker);
        assert.equal(receiver.received.length, 1);

        for (const [i, delay] of DEFAULT_RETRY_DELAYS_MS.entries()) {
          // A millisecond early: nothing is sent.
          clock.advance(delay - 1);
          await worker.runUntilIdle();
          assert.equal(receiver.received.length, i + 1, `retry ${i + 1} went out before its time`);
          assert.equal(await cargoStatus(h.db.database, id), 'callback_pending');
          clock.advance(1);
          await worker.runUntilIdle();
          assert.equal(receiver.received.length, i + 2, `retry ${i + 1} did not go out at its time`);
        }
        assert.equal(await cargoStatus(h.db.database, id), 'callback_failed');

        // Each attempt starts at the previous one's start plus the delay: the last at 1 h 42 min 30 s.
        const attempts = await attemptsOfCargo(h.db.database, id);
        const starts = attempts.map((a) => Number(a.started_at) - t0);
        assert.deepEqual(starts, [0, 30_000, 150_000, 750_000, 2_550_000, 6_150_000]);
        assert.equal(starts.at(-1), (1 * 3600 + 42 * 60 + 30) * 1000);
        assert.deepEqual(
          attempts.map((a) => a.status_code),
          [500, 500, 500, 500, 500, 500],
        );

        // Nothing more, however long we wait.
        clock.advance(24 * 3_600_000);
        await worker.runUntilIdle();
        assert.equal(receiver.received.length, 6);

        const result = await h.app.request('GET', `/cargo/${id}/result`, { key });
        assert.equal(result.status, 200);
        assert.equal(result.body.cargo_id, id);
        assert.equal(result.body.success, true);
        assert.equal(result.body.response.type, 'message');
        const tracking = await assertTracking(key, id, 'callback_failed', {
          status: 'failed',
          attempts: 6,
          last_error: 'receiver answered HTTP 500',
          last_status_code: 500,
          next_attempt_at: null,
        });
        assert.equal(tracking.status_description, 'Delivery failed after 6 attempts: receiver answered HTTP 500');
        assertSignedPosts(receiver.received, webhookSecret);
      } finally {
        await receiver.close();
      }
    });

    describe('failed attempts are classified', () => {
      // One attempt and no retries, so each case ends callback_failed and leaves nothing behind.
      const options = { latencyMs: 0, ...deliveryConfig({ retryDelaysMs: [], webhookTimeoutMs: 300 }) };

      async function oneFailedAttempt(callbackUrl: string) {
        const { worker } = await h.worker(options);
        const { key } = await createProjectWithKey(h.db.database);
        const id = await load(h.app, key, 'classify me', { callback_url: callbackUrl });
        await finish(worker);
        const attempts = await attemptsOfCargo(h.db.database, id);
        assert.equal(attempts.length, 1, JSON.stringify(attempts));
        assert.equal(await cargoStatus(h.db.database, id), 'callback_failed');
        const tracking = await h.app.request('GET', `/cargo/${id}/tracking`, { key });
        assert.equal(tracking.body.deliveries[0].last_error, attempts[0]?.error_detail);
        return attempts[0] as NonNullable<(typeof attempts)[0]>;
      }

      test('a receiver that holds the request: timeout', async () => {
        const receiver = await startReceiver(() => {});
        try {
          const attempt = await oneFailedAttempt(`${receiver.url}/slow`);
          assert.equal(attempt.error_class, 'timeout');
          assert.equal(attempt.status_code, null);
          assert.equal(attempt.error_detail, 'no response within 300 ms');
          assert.ok(attempt.duration_ms >= 250 && attempt.duration_ms < 3000, `${attempt.duration_ms} ms`);
          assert.equal(receiver.received.length, 1);
        } finally {
          await receiver.close();
        }
      });

      test('a port nobody listens on: connection_refused', async () => {
        const attempt = await oneFailedAttempt(`http://127.0.0.1:${await freePort()}/hook`);
        assert.equal(attempt.error_class, 'connection_refused');
        assert.equal(attempt.status_code, null);
      });

      test('a host name that does not resolve: dns', async () => {
        const attempt = await oneFailedAttempt('http://nothing.invalid/');
        assert.equal(attempt.error_class, 'dns');
        assert.match(attempt.error_detail ?? '', /DNS lookup failed/);
      });

      test('a 302 is a failure and is not followed', async () => {
        const target = await startReceiver();
        const redirecting = await startReceiver((_r, _i, res) =>
          res.writeHead(302, { location: `${target.url}/elsewhere` }).end('moved'),
        );
        try {
          const attempt = await oneFailedAttempt(`${redirecting.url}/hook`);
          assert.equal(attempt.error_class, 'http_status');
          assert.equal(attempt.status_code, 302);
          assert.equal(attempt.response_excerpt, 'moved');
          assert.equal(redirecting.received.length, 1);
          assert.equal(target.received.length, 0);
          assert.equal(target.connections, 0);
        } finally {
          await redirecting.close();
          await target.close();
        }
      });
    });

    test('a failed cargo delivers success false, response null, error = error_message, and the metadata', async () => {
      const receiver = await startReceiver();
      try {
        const { worker } = await h.worker({ latencyMs: 0 });
        const { key, webhookSecret } = await createProjectWithKey(h.db.database);
        const metadata = { order: 'B-2', tags: ['x', 'y'], nested: { a: null } };
        const id = await load(h.app, key, 'please svc-mock:fail now', { callback_url: `${receiver.url}/h`, metadata });
        await finish(worker);

        assert.equal(receiver.received.length, 1);
        const payload = JSON.parse(receiver.received[0]?.body ?? '');
        assert.deepEqual(Object.keys(payload), WEBHOOK_PAYLOAD_KEYS);
        assert.equal(payload.cargo_id, id);
        assert.equal(payload.success, false);
        assert.equal(payload.response, null);
        assert.equal(typeof payload.error, 'string');
        assert.ok(payload.error.length > 0);
        assert.equal(payload.error_message, payload.error);
        assert.deepEqual(payload.metadata, metadata);
        const mailbox = await h.app.request('GET', `/cargo/${id}/result`, { key });
        assert.equal(mailbox.body.success, false);
        assert.equal(mailbox.body.error_message, payload.error);
        // The webhook landed: the cargo's delivery succeeded even though its result is a failure.
        assert.equal(await cargoStatus(h.db.database, id), 'callback_delivered');
        assertSignedPosts(receiver.received, webhookSecret);
      } finally {
        await receiver.close();
      }
    });

    test('no callback_url: no delivery row, no POST, the status stays completed (or failed)', async () => {
      const { worker } = await h.worker({ latencyMs: 0 });
      const { key } = await createProjectWithKey(h.db.database);
      const ok = await load(h.app, key, 'mailbox only');
      const failed = await load(h.app, key, 'mailbox only svc-mock:fail');
      await finish(worker);
      clock.advance(2 * 3_600_000);
      await worker.runUntilIdle();
      assert.equal(await cargoStatus(h.db.database, ok), 'completed');
      assert.equal(await cargoStatus(h.db.database, failed), 'failed');
      for (const id of [ok, failed]) {
        assert.deepEqual(await deliveriesOf(h.db.database, id), []);
        const tracking = await h.app.request('GET', `/cargo/${id}/tracking`, { key });
        assert.equal('deliveries' in tracking.body, false);
        assert.equal((await h.app.request('GET', `/cargo/${id}/result`, { key })).status, 200);
      }
    });

    test('a restart between attempts: the new worker waits for the due time, then makes attempt 2', async () => {
      const receiver = await startReceiver((_r, i, res) => res.writeHead(i === 0 ? 503 : 200).end());
      try {
        const a = (await h.worker({ latencyMs: 0 })).worker;
        const { key, webhookSecret } = await createProjectWithKey(h.db.database);
        const id = await load(h.app, key, 'survive a restart', { callback_url: `${receiver.url}/h` });
        const t0 = await finish(a);
        assert.equal(receiver.received.length, 1);
        await a.close();

        const b = (await h.worker({ latencyMs: 0 })).worker;
        await b.runUntilIdle();
        clock.advance(30_000 - 1);
        await b.runUntilIdle();
        assert.equal(receiver.received.length, 1, 'worker B sent before the due time');
        clock.advance(1);
        await b.runUntilIdle();
        assert.equal(receiver.received.length, 2);
        const attempts = await attemptsOfCargo(h.db.database, id);
        assert.deepEqual(
          attempts.map((x) => [x.attempt, x.status_code, Number(x.started_at)]),
          [
            [1, 503, t0],
            [2, 200, t0 + 30_000],
          ],
        );
        assert.equal(await cargoStatus(h.db.database, id), 'callback_delivered');
        assertSignedPosts(receiver.received, webhookSecret);
        await b.close();
      } finally {
        await receiver.close();
      }
    });

    test('a worker that dies holding a lease: another worker makes the attempt once the lease lapses', async () => {
      const receiver = await startReceiver((_r, i, res) => res.writeHead(i === 0 ? 503 : 200).end());
      try {
        const { worker } = await h.worker({ latencyMs: 0 });
        const { key, webhookSecret } = await createProjectWithKey(h.db.database);
        const id = await load(h.app, key, 'orphaned attempt', { callback_url: `${receiver.url}/h` });
        const t0 = await finish(worker);
        assert.equal(receiver.received.length, 1);

        // Retry 1 falls due; a worker claims it and dies before recording anything.
        clock.advance(30_000);
        const leaseMs = 60_000;
        const claimed = await leaseAllDue(h.db.database, {
          workerId: 'dead',
          now: clock.now(),
          leaseMs,
          limit: 10,
        });
        assert.deepEqual(
          claimed.map((c) => c.cargoId),
          [id],
        );
        await worker.runUntilIdle();
        clock.advance(leaseMs);
        await worker.runUntilIdle();
        assert.equal(receiver.received.length, 1, 'an attempt went out while the lease was held');
        clock.advance(1);
        await worker.runUntilIdle();
        assert.equal(receiver.received.length, 2);
        const attempts = await attemptsOfCargo(h.db.database, id);
        assert.deepEqual(
          attempts.map((x) => [x.attempt, x.status_code, Number(x.started_at) - t0]),
          [
            [1, 503, 0],
            [2, 200, 30_000 + leaseMs + 1],
          ],
        );
        assert.equal(await cargoStatus(h.db.database, id), 'callback_delivered');
        assertSignedPosts(receiver.received, webhookSecret);
      } finally {
        await receiver.close();
      }
    });

    test('a worker whose own lease lapsed mid-attempt (a late renewal) does not attempt the delivery again meanwhile', async () => {
      const answers: ServerResponse[] = [];
      const receiver = await startReceiver((_r, _i, res) => answers.push(res));
      const { worker } = await h.worker({ latencyMs: 0 });
      const delivery = worker.delivery as DeliveryWorker;
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const id = await load(h.app, key, 'a long attempt', { callback_url: `${receiver.url}/h` });
        clock.advance(500);
        while (await (worker.pipeline as PipelineWorker).runOnce());
        delivery.start();
        await waitFor(
          'the first attempt',
          () => receiver.received.length,
          (n) => n === 1,
          { timeoutMs: 10_000 },
        );

        // The lease (60 s) lapses on this clock; its renewal (every 20 s of real time) has not run.
        clock.advance(60_001);
        const [deliveries] = delivery.loops as [Loop];
        const steps = deliveries.snapshot().steps;
        delivery.wake();
        await waitFor(
          'the deliverer to look again',
          () => deliveries.snapshot().steps,
          (n) => n >= steps + 3,
          {
            timeoutMs: 10_000,
          },
        );
        assert.equal(receiver.received.length, 1, 'a second attempt started while the first was in flight');
        // The lease is taken back at once, so the delivery is not found due at every step meanwhile.
        const lease = await h.db.database.read
          .selectFrom('deliveries')
          .select(['locked_by', 'locked_until'])
          .where('cargo_id', '=', id)
          .executeTakeFirstOrThrow();
        assert.ok(
          Number(lease.locked_until) > clock.now(),
          `the lapsed lease was not renewed: ${JSON.stringify(lease)}`,
        );

        answers[0]?.writeHead(200).end();
        await waitFor(
          'the delivery recorded',
          () => cargoStatus(h.db.database, id),
          (s) => s === 'callback_delivered',
          {
            timeoutMs: 10_000,
          },
        );
        assert.deepEqual(
          (await attemptsOfCargo(h.db.database, id)).map((a) => [a.attempt, a.status_code]),
          [[1, 200]],
        );
      } finally {
        await worker.close();
        await receiver.close();
      }
    });

    test('after a secret rotation both secrets verify for 24 hours, then only the new one; no secret leaks', async () => {
      const receiver = await startReceiver();
      try {
        const { worker } = await h.worker({ latencyMs: 0 });
        const { key, slug, webhookSecret: oldSecret } = await createProjectWithKey(h.db.database);
        const rotated = await rotateWebhookSecret(h.db.database, slug, clock.now());
        assert.ok(rotated);
        const newSecret = rotated.webhookSecret;
        assert.notEqual(newSecret, oldSecret);

        const first = await load(h.app, key, 'rotated', { callback_url: `${receiver.url}/h` });
        await finish(worker);
        assert.equal(receiver.received.length, 1);
        const [post] = receiver.received;
        assert.ok(post);
        assert.equal(String(post.headers['webhook-signature']).split(' ').length, 2);
        assert.ok(verifies(post, newSecret), 'verifies with the new secret');
        assert.ok(verifies(post, oldSecret), 'verifies with the old secret during the grace period');
        assert.ok(!verifies(post, `whsec_${Buffer.alloc(32, 7).toString('base64')}`), 'a stranger secret fails');

        clock.advance(24 * 3_600_000 + 1);
        const second = await load(h.app, key, 'rotated, later', { callback_url: `${receiver.url}/h` });
        await finish(worker);
        assert.equal(receiver.received.length, 2);
        const later = receiver.received[1];
        assert.ok(later);
        assert.equal(String(later.headers['webhook-signature']).split(' ').length, 1);
        assert.ok(verifies(later, newSecret));
        assert.ok(!verifies(later, oldSecret), 'the old secret no longer signs after the grace period');

        for (const secret of [oldSecret, newSecret]) {
          for (const p of receiver.received) assertNoSecret(p.body + JSON.stringify(p.headers), secret);
          for (const id of [first, second]) {
            assertNoSecret(JSON.stringify(await attemptsOfCargo(h.db.database, id)), secret);
            assertNoSecret(JSON.stringify(await deliveriesOf(h.db.database, id)), secret);
          }
        }
      } finally {
        await receiver.close();
      }
    });
  });
}
