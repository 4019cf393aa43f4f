/** Redelivery on SQLite and PostgreSQL: a finished cargo delivered afresh, its refusals, `barge cargo redeliver`. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../../src/domain/clock.js';
import { createRedelivery } from '../../src/store/deliveries/redeliver.js';
import { createProjectWithKey, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { testWorker } from '../helpers/pipeline.js';
import { startReceiver } from '../helpers/receiver.js';
import {
  assertSignedPosts,
  attemptsOfCargo,
  cargoStatus,
  deliveriesOf,
  deliveryConfig,
  load,
} from './webhook-support.js';

/** The built command, as installed (`npm test` builds it first). */
const MAIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

function barge(
  databaseUrl: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('BARGE_')) env[name] = value;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...env, BARGE_DATABASE_URL: databaseUrl, BARGE_LOG_LEVEL: 'silent' }, timeout: 20_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

for (const backend of await backends({ childProcesses: true })) {
  describe(`redelivery on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    // Behind the real time, and moved by seconds only: the CLI stamps its redelivery with the
    // system clock, and the cargo's status follows the latest delivery by creation time.
    const clock = new ManualClock(Date.now() - 3_600_000);
    before(async () => {
      assert.ok(existsSync(MAIN), `${MAIN} is missing: run npm run build (npm test does it in pretest)`);
      db = await backend.create();
      app = await startTestApp(db.database, { clock });
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    /** One attempt, no retries: a receiver answering 500 leaves the cargo callback_failed. */
    const options = () => ({ latencyMs: 0, ...deliveryConfig({ retryDelaysMs: [] }) });

    async function failedCargo(url: string) {
      const { worker } = await testWorker(db.database, clock, options());
      const project = await createProjectWithKey(db.database);
      const id = await load(app, project.key, 'deliver me again', { callback_url: `${url}/h` });
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal(await cargoStatus(db.database, id), 'callback_failed');
      return { id, worker, ...project };
    }

    test('a callback_failed cargo is delivered afresh and ends callback_delivered', async () => {
      let answer = 500;
      const receiver = await startReceiver((_r, _i, res) => res.writeHead(answer).end());
      try {
        const { id, worker, key, webhookSecret } = await failedCargo(receiver.url);
        assert.deepEqual(await createRedelivery(db.database, id, clock.now()), { channels: ['webhook'] });
        assert.equal(await cargoStatus(db.database, id), 'callback_pending');
        answer = 200;
        await worker.runUntilIdle();

        assert.equal(receiver.received.length, 2);
        assert.equal(receiver.received[1]?.body, receiver.received[0]?.body);
        assert.equal(await cargoStatus(db.database, id), 'callback_delivered');
        const attempts = await attemptsOfCargo(db.database, id);
        assert.deepEqual(
          attempts.map((a) => [a.attempt, a.status_code, a.trigger]),
          [
            [1, 500, 'result'],
            [1, 200, 'redeliver'],
          ],
        );
        const tracking = await app.request('GET', `/cargo/${id}/tracking`, { key });
        assert.equal(tracking.body.status, 'callback_delivered');
        assert.deepEqual(
          tracking.body.deliveries.map((d: { status: string; attempts: number }) => [d.status, d.attempts]),
          [
            ['failed', 1],
            ['delivered', 1],
          ],
        );
        assertSignedPosts(receiver.received, webhookSecret);
      } finally {
        await receiver.close();
      }
    });

    test('refused: no result yet, no callback asked for, a delivery in progress, an unknown cargo', async () => {
      const receiver = await startReceiver((_r, _i, res) => res.writeHead(500).end());
      try {
        const { key } = await createProjectWithKey(db.database);
        const pending = await load(app, key, 'not batched yet', { callback_url: `${receiver.url}/h` });
        assert.match(refusal(await createRedelivery(db.database, pending, clock.now())), /has no result yet/);
        assert.equal(await cargoStatus(db.database, pending), 'pending');

        // One retry, a second after the first attempt.
        const { worker } = await testWorker(db.database, clock, {
          latencyMs: 0,
          ...deliveryConfig({ retryDelaysMs: [1000] }),
        });
        const mailboxOnly = await load(app, key, 'no callback');
        clock.advance(500);
        await worker.runUntilIdle();
        // `pending` now has a result and a delivery waiting for its first retry.
        assert.equal(await cargoStatus(db.database, pending), 'callback_pending');
        assert.match(refusal(await createRedelivery(db.database, pending, clock.now())), /has a delivery in progress/);
        assert.match(refusal(await createRedelivery(db.database, mailboxOnly, clock.now())), /asked for no delivery/);
        assert.equal(await cargoStatus(db.database, mailboxOnly), 'completed');
        assert.deepEqual(await deliveriesOf(db.database, mailboxOnly), []);
        assert.match(
          refusal(await createRedelivery(db.database, 'crg_00000000000000000000000000', clock.now())),
          /no cargo/,
        );
        // Let the retry run out, so nothing of this test is left pending.
        clock.advance(1000);
        await worker.runUntilIdle();
        assert.equal(await cargoStatus(db.database, pending), 'callback_failed');
      } finally {
        await receiver.close();
      }
    });

    test('barge cargo redeliver --json schedules it; the CLI refuses pending and mailbox-only cargo', async () => {
      let answer = 500;
      const receiver = await startReceiver((_r, _i, res) => res.writeHead(answer).end());
      try {
        const { id, worker, key, webhookSecret } = await failedCargo(receiver.url);
        const run = await barge(db.url, 'cargo', 'redeliver', id, '--json');
        assert.equal(run.code, 0, run.stderr);
        assert.deepEqual(JSON.parse(run.stdout), { cargo_id: id, channels: ['webhook'], status: 'callback_pending' });
        assert.equal(await cargoStatus(db.database, id), 'callback_pending');
        // The CLI stamped the delivery with the real time; catch the test clock up with it.
        clock.set(Date.now() + 1000);
        answer = 200;
        await worker.runUntilIdle();
        assert.equal(await cargoStatus(db.database, id), 'callback_delivered');
        assertSignedPosts(receiver.received, webhookSecret);

        const pending = await load(app, key, 'not batched yet', { callback_url: `${receiver.url}/h` });
        const refusedPending = await barge(db.url, 'cargo', 'redeliver', pending, '--json');
        assert.notEqual(refusedPending.code, 0);
        assert.match(JSON.parse(refusedPending.stdout).error, /has no result yet/);
        assert.match(refusedPending.stderr, /has no result yet/);

        const mailboxOnly = await load(app, key, 'no callback');
        clock.advance(500);
        await worker.runUntilIdle();
        assert.equal(await cargoStatus(db.database, mailboxOnly), 'completed');
        const refusedMailbox = await barge(db.url, 'cargo', 'redeliver', mailboxOnly, '--json');
        assert.notEqual(refusedMailbox.code, 0);
        assert.match(JSON.parse(refusedMailbox.stdout).error, /asked for no delivery/);
        assert.equal(await cargoStatus(db.database, mailboxOnly), 'completed');
        assert.equal(await cargoStatus(db.database, pending), 'callback_delivered');
      } finally {
        await receiver.close();
      }
    });
  });
}

/** The refusal's message, after checking it names its reason with a code. */
function refusal(outcome: { channels: string[] } | { refused: { code: string; message: string } }): string {
  assert.ok('refused' in outcome, `expected a refusal, got ${JSON.stringify(outcome)}`);
  assert.match(outcome.refused.code, /^[a-z_]+$/);
  return outcome.refused.message;
}
