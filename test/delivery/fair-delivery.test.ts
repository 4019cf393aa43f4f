/**
 * Deliveries against hostile receivers, with real `barge serve` children and real time:
 * - one project's receivers all accept and never answer, and another project's webhook still
 *   arrives within 2 s (the audit's M4 set-up: 8 slots, 2 per host, 16 cargo on 8 receivers);
 * - a worker killed mid-attempt lets its delivery be attempted again, by the worker started after
 *   it, within BARGE_LEASE_MS of the kill (and while alive it keeps the delivery, however long the
 *   attempt runs).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { serveHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { loadOverHttp } from '../helpers/serve.js';
import { sleep, waitFor } from '../helpers/wait.js';

const VICTIM_WITHIN_MS = 2000;
const LEASE_MS = 2000;

for (const backend of await backends({ childProcesses: true })) {
  describe(`fair delivery against hanging receivers on ${backend.name}`, () => {
    const h = serveHarness(backend);

    const serve = (env: Record<string, string>) => h.serveAll(env);

    const load = (url: string, key: string, callbackUrl: string) =>
      loadOverHttp(url, key, mockBody('fair delivery', { callback_url: callbackUrl }));

    test(`one project's receivers all hang; another project's webhook arrives within ${VICTIM_WITHIN_MS} ms`, async () => {
      const tarpits = await Promise.all(Array.from({ length: 8 }, () => startReceiver(() => {})));
      const healthy = await startReceiver();
      const { child, url } = await serve({
        BARGE_DELIVERY_CONCURRENCY: '8',
        BARGE_DELIVERY_PER_HOST: '2',
        BARGE_WEBHOOK_TIMEOUT_MS: '20000',
      });
      try {
        const attacker = await createProjectWithKey(h.db.database);
        const victim = await createProjectWithKey(h.db.database);
        for (let i = 0; i < 16; i++) await load(url, attacker.key, `${tarpits[i % 8]?.url}/hang`);
        const held = () => tarpits.reduce((n, t) => n + t.received.length, 0);
        // The attacker's attempts hold what they may, and keep holding it.
        await waitFor('the tarpits to hold their requests', held, (n) => n >= 7, { timeoutMs: 10_000 });
        await sleep(500);

        const submitted = Date.now();
        await load(url, victim.key, `${healthy.url}/ok`);
        await waitFor(
          'the victim webhook',
          () => healthy.received.length,
          (n) => n >= 1,
          {
            timeoutMs: VICTIM_WITHIN_MS + 4000,
          },
        ).catch(() => {});
        assert.equal(
          healthy.received.length,
          1,
          `the victim's webhook did not arrive within ${VICTIM_WITHIN_MS + 4000} ms`,
        );
        const took = (healthy.received[0]?.at as number) - submitted;
        assert.ok(took <= VICTIM_WITHIN_MS, `the victim's webhook arrived ${took} ms after submit`);
        assert.ok(held() < 16, `${held()} requests at the tarpits: one project held every slot`);
      } finally {
        for (const t of tarpits) await t.close();
        await child.stop('SIGKILL');
        await healthy.close();
      }
    });

    test(`a worker killed mid-attempt: the delivery is attempted again within BARGE_LEASE_MS (${LEASE_MS} ms)`, async () => {
      const hanging = await startReceiver(() => {});
      const env = { BARGE_LEASE_MS: String(LEASE_MS), BARGE_WEBHOOK_TIMEOUT_MS: '30000' };
      let worker = await serve(env);
      try {
        const { key } = await createProjectWithKey(h.db.database);
        await load(worker.url, key, `${hanging.url}/hang`);
        await waitFor(
          'the first attempt',
          () => hanging.received.length,
          (n) => n >= 1,
          { timeoutMs: 10_000 },
        );

        // Alive, the worker keeps its lease however long the attempt runs: it does not try again.
        await sleep(3 * LEASE_MS);
        assert.equal(hanging.received.length, 1, 'a second attempt started while the first was in flight');

        await worker.child.stop('SIGKILL');
        const killed = Date.now();
        worker = await serve(env);
        const ready = Date.now();
        await waitFor(
          'the attempt after the kill',
          () => hanging.received.length,
          (n) => n >= 2,
          {
            timeoutMs: 15_000,
          },
        ).catch(() => {});
        assert.equal(hanging.received.length, 2, 'no attempt within 15 s of the kill');
        // The lease lapses at most LEASE_MS after the kill (its last renewal was before it); the
        // new worker claims it within a second of that, or of being up if starting took longer.
        const at = hanging.received[1]?.at as number;
        const late = at - Math.max(killed + LEASE_MS, ready);
        assert.ok(late < 1000, `attempted again ${at - killed} ms after the kill, ${at - ready} ms after the restart`);
      } finally {
        await hanging.close();
        await worker.child.stop('SIGKILL');
      }
    });
  });
}
