/**
 * Retry timing with real time, against a real `barge serve` child: with 200 ms retry delays and a
 * receiver that always answers 500, every retry must start within a second of its due time, and
 * the cargo must reach callback_failed right after the last one, on each database and after a
 * restart in the middle of the schedule. Nothing else happens in the process to wake the worker.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { serveHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { loadOverHttp } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const DELAYS = [200, 200, 200, 200, 200];

for (const backend of await backends({ childProcesses: true })) {
  describe(`webhook retries on time on ${backend.name}`, () => {
    const h = serveHarness(backend);

    const serve = (delays = DELAYS) => h.serveAll({ BARGE_WEBHOOK_RETRY_DELAYS_MS: delays.join(',') });

    const load = (url: string, key: string, callbackUrl: string) =>
      loadOverHttp(url, key, mockBody('retry timing', { callback_url: callbackUrl }));

    /** When barge started each delivery attempt of the cargo, as it recorded them. */
    const attemptStarts = async (cargoId: string) =>
      (
        await h.db.database.read
          .selectFrom('delivery_attempts as a')
          .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
          .select('a.started_at')
          .where('d.cargo_id', '=', cargoId)
          .orderBy('a.started_at')
          .execute()
      ).map((r) => Number(r.started_at));

    /**
     * Waits for 6 POSTs and their 6 recorded attempts, then holds retries `from` on to their due
     * time, the previous attempt's recorded start plus its delay: never started before it, arrived
     * within a second after it, or after the previous attempt ended if that was later (the first
     * attempt of a process just started can take longer than a 200 ms delay to reach the
     * receiver, which answers at once).
     */
    const assertRetriesOnTime = async (
      cargoId: string,
      receiver: { received: { at: number }[] },
      delays: number[],
      from = 1,
    ) => {
      await waitFor(
        '6 POSTs',
        () => receiver.received.length,
        (n) => n >= 6,
        { timeoutMs: 15_000 },
      );
      const started = await waitFor(
        '6 recorded attempts',
        () => attemptStarts(cargoId),
        (rows) => rows.length >= 6,
        { timeoutMs: 2000, intervalMs: 10 },
      );
      const at = receiver.received.map((r) => r.at);
      for (let i = from; i < at.length; i++) {
        const due = (started[i - 1] as number) + (delays[i - 1] as number);
        const early = due - (started[i] as number);
        const late = (at[i] as number) - Math.max(due, at[i - 1] as number);
        assert.ok(early <= 0, `retry ${i} started ${early} ms before it was due: ${JSON.stringify(started)}`);
        assert.ok(late < 1000, `retry ${i} came ${late} ms after it was due: ${JSON.stringify({ started, at })}`);
      }
    };

    const tracking = async (url: string, key: string, cargoId: string) =>
      (await (await fetch(`${url}/cargo/${cargoId}/tracking`, { headers: { 'x-api-key': key } })).json()) as {
        status: string;
      };

    test('6 POSTs, each retry within 1 s of its due time, then callback_failed', async () => {
      const receiver = await startReceiver((_r, _i, res) => res.writeHead(500).end('no'));
      const { child, url } = await serve();
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const cargoId = await load(url, key, `${receiver.url}/hook`);
        await assertRetriesOnTime(cargoId, receiver, DELAYS);
        const settled = await waitFor(
          'callback_failed',
          () => tracking(url, key, cargoId),
          (t) => t.status === 'callback_failed',
          { timeoutMs: 2000, intervalMs: 20 },
        );
        assert.equal(settled.status, 'callback_failed');
        assert.equal(receiver.received.length, 6);
      } finally {
        await child.stop('SIGTERM');
        await receiver.close();
      }
    });

    test('a retry due while the process was down starts within 1 s of the restart', async () => {
      const receiver = await startReceiver((_r, _i, res) => res.writeHead(500).end('no'));
      // A longer gap after the second attempt, so the process is killed between attempts (an
      // attempt cut off mid-flight waits for its lease instead: that is not what this tests); and
      // after the third, the first the new process makes: on a loaded machine a process just
      // started takes a second or two over its first writes, and the warm timing is the first test's.
      const delays = [200, 1500, 1500, 200, 200];
      let first = await serve(delays);
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const cargoId = await load(first.url, key, `${receiver.url}/hook`);
        const attempts = await waitFor(
          '2 recorded attempts',
          () => attemptStarts(cargoId),
          (rows) => rows.length >= 2,
          {
            timeoutMs: 15_000,
            intervalMs: 10,
          },
        );
        await first.child.stop('SIGKILL');
        const seen = receiver.received.length;
        assert.equal(seen, 2);
        const due = (attempts[1] as number) + 1500;
        first = await serve(delays);
        const ready = Date.now();
        // Waited for well past the bound, so a late retry is reported with its lateness.
        await waitFor(
          'the next POST',
          () => receiver.received.length,
          (n) => n > seen,
          { timeoutMs: 15_000 },
        ).catch((err: Error) => assert.fail(`${err.message}\nbarge's stderr:\n${first.child.stderr}`));
        const next = receiver.received[seen]?.at as number;
        const late = next - Math.max(ready, due);
        assert.ok(
          late < 1000,
          `the first retry after the restart came ${late} ms after it was due and barge was up\n${first.child.stderr}`,
        );
        // The retries after it, each due 200 ms after the one before started.
        await assertRetriesOnTime(cargoId, receiver, delays, seen + 1);
      } finally {
        await first.child.stop('SIGTERM');
        await receiver.close();
      }
    });
  });
}
