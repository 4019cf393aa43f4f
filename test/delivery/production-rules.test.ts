/**
 * Production settings (allowPrivateCallbacks: false, the default when BARGE_ENV=production):
 * callback URLs must be https, and a delivery never connects to a private or reserved address,
 * whether the URL names it literally or a host name resolves to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { createProjectWithKey, mockBody, startTestApp, type TestApp } from '../helpers/app.js';
import { assertInvalidField } from '../helpers/assertions.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { testWorker } from '../helpers/pipeline.js';
import { startReceiver } from '../helpers/receiver.js';
import { attemptsOfCargo, cargoStatus, deliveryConfig, load } from './webhook-support.js';

for (const backend of await backends()) {
  describe(`production callback rules on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, { clock, config: { allowPrivateCallbacks: false } });
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    test('submit refuses a plain http callback_url with a 400 naming /callback_url', async () => {
      const { key } = await createProjectWithKey(db.database);
      const res = await app.request('POST', '/cargo/load', {
        key,
        body: mockBody('hi', { callback_url: 'http://example.com/hook' }),
      });
      assertInvalidField(res, '/callback_url');
      assert.match(JSON.stringify(res.body.errors), /https/);
    });

    test('private and reserved targets are refused without any connection', async () => {
      const receiver = await startReceiver();
      try {
        const { key } = await createProjectWithKey(db.database);
        // One attempt, no retries: each cargo ends callback_failed.
        const { worker } = await testWorker(db.database, clock, {
          latencyMs: 0,
          ...deliveryConfig({ retryDelaysMs: [], webhookTimeoutMs: 2000 }, { allowPrivateCallbacks: false }),
        });
        const port = receiver.port;
        const targets = [
          // A name that resolves to 127.0.0.1 (and ::1): refused in the connect-time DNS lookup.
          `https://localhost:${port}/hook`,
          // Literals skip DNS: refused before connecting.
          `https://127.0.0.1:${port}/hook`,
          `https://[::ffff:127.0.0.1]:${port}/hook`,
          `https://[::1]:${port}/hook`,
          `https://0.0.0.0:${port}/hook`,
          `https://2130706433:${port}/hook`, // 127.0.0.1 as one decimal number
          'https://169.254.169.254/latest/meta-data/',
          'https://10.0.0.1/hook',
          'https://100.64.0.1/hook',
        ];
        const ids: string[] = [];
        for (const url of targets) ids.push(await load(app, key, `to ${url}`, { callback_url: url }));
        clock.advance(500);
        await worker.runUntilIdle();

        for (const [i, id] of ids.entries()) {
          const attempts = await attemptsOfCargo(db.database, id);
          assert.equal(attempts.length, 1, `${targets[i]}: ${JSON.stringify(attempts)}`);
          assert.equal(attempts[0]?.error_class, 'blocked_address', `${targets[i]}: ${attempts[0]?.error_detail}`);
          assert.equal(attempts[0]?.status_code, null);
          assert.match(attempts[0]?.error_detail ?? '', /private or reserved address|non-public address/);
          assert.equal(await cargoStatus(db.database, id), 'callback_failed');
          // Tracking says it was refused, and why, not that retries ran out.
          const tracking = await app.request('GET', `/cargo/${id}/tracking`, { key });
          assert.equal(
            tracking.body.status_description,
            `Delivery refused: the callback address is not allowed (${attempts[0]?.error_detail})`,
          );
        }
        // The tenant learns that localhost is not public, not which address it resolves to.
        const named = (await attemptsOfCargo(db.database, ids[0] as string))[0]?.error_detail ?? '';
        assert.match(named, /^localhost resolves to a non-public address/);
        assert.doesNotMatch(named, /127\.0\.0\.1|::1/);
        assert.equal(receiver.connections, 0, 'the receiver was contacted');
        assert.equal(receiver.received.length, 0);
      } finally {
        await receiver.close();
      }
    });

    test('a stored http callback_url is not delivered once private callbacks are off', async () => {
      // Accepted while the operator allowed http (a development app), delivered by a production worker.
      const devApp = await startTestApp(db.database, { clock, config: { allowPrivateCallbacks: true } });
      const receiver = await startReceiver();
      try {
        const { key } = await createProjectWithKey(db.database);
        const id = await load(devApp, key, 'plain http', { callback_url: `http://localhost:${receiver.port}/hook` });
        const { worker } = await testWorker(db.database, clock, {
          latencyMs: 0,
          ...deliveryConfig({ retryDelaysMs: [] }, { allowPrivateCallbacks: false }),
        });
        clock.advance(500);
        await worker.runUntilIdle();
        const attempts = await attemptsOfCargo(db.database, id);
        assert.equal(attempts[0]?.error_class, 'invalid_url');
        assert.equal(receiver.connections, 0);
        const tracking = await devApp.request('GET', `/cargo/${id}/tracking`, { key });
        assert.equal(tracking.body.status_description, 'Delivery refused: production deliveries require https');
      } finally {
        await receiver.close();
        await devApp.close();
      }
    });
  });
}
