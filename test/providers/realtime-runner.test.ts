/**
 * The endpoint runner's loop on a real clock, over a real database and the real-time endpoint
 * emulator: an idle worker looks for requests every second with a read, and writes (a transaction
 * that leases requests and takes slots) only when something is due; a batch stored and woken for
 * is sent at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.js';
import type { RealtimeQueue } from '../../src/domain/realtime-requests.js';
import { noMetrics, silentLogger } from '../../src/ports.js';
import { RealtimeRunner } from '../../src/providers/openai-compatible/runner.js';
import { realtimeQueue } from '../../src/store/realtime/queue.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { SERVED_MODEL } from '../helpers/realtime.js';
import { type RealtimeEmulator, startRealtimeEmulator } from '../helpers/realtime-emulator.js';
import { waitFor } from '../helpers/wait.js';

const ENDPOINT = 'gpu';

for (const backend of await backends()) {
  describe(`the endpoint runner's loop on ${backend.name}`, () => {
    let db: TestDatabase;
    let emu: RealtimeEmulator;
    let runner: RealtimeRunner;
    let queue: RealtimeQueue;
    let writes = 0;
    before(async () => {
      db = await backend.create();
      emu = await startRealtimeEmulator({ models: [SERVED_MODEL] });
      const store = realtimeQueue(db.database);
      queue = {
        ...store,
        settleAndClaim: (input) => {
          writes++;
          return store.settleAndClaim(input);
        },
      };
      const endpoint = {
        name: ENDPOINT,
        baseUrl: emu.baseURL,
        apiKeyEnv: null,
        apiKey: null,
        maxConcurrency: 2,
        timeoutMs: 5_000,
      };
      runner = new RealtimeRunner([endpoint], {
        queue,
        clock: systemClock,
        workerId: 'worker-1',
        log: silentLogger,
        metrics: noMetrics,
        idleMaxMs: 60_000,
      });
      for (const loop of runner.loops) loop.start();
    });
    after(async () => {
      await Promise.all(runner.loops.map((loop) => loop.stop()));
      await runner.stop(1_000);
      await emu.close();
      await db.drop();
    });

    test('idle, it writes nothing; a woken batch is sent at once; idle again, it writes nothing', async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.equal(writes, 0, 'an idle runner leased nothing, so it wrote nothing');

      const now = Date.now();
      async function* requests() {
        for (const text of ['one', 'two', 'three']) {
          yield { customId: text, input: JSON.stringify({ messages: [{ role: 'user', content: text }] }) };
        }
      }
      await queue.enqueue({
        batchId: 'batch-1',
        endpoint: ENDPOINT,
        model: SERVED_MODEL,
        requests: requests(),
        now,
        deadlineAt: now + 86_400_000,
      });
      runner.wake(ENDPOINT);
      await waitFor(
        'the batch answered',
        () => queue.progress('batch-1'),
        (p) => p.queued === 0,
        {
          timeoutMs: 3_000,
          intervalMs: 20,
        },
      );
      assert.equal(emu.answered, 3);
      assert.ok(Date.now() - now < 1_000, `sent and stored within a second of the wake (${Date.now() - now} ms)`);
      assert.ok(writes > 0);

      const settled = writes;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.equal(writes, settled, 'nothing was written once the batch was done');
    });
  });
}
