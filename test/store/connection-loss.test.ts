/**
 * A real `barge serve` on PostgreSQL loses every one of its connections at once (what a restart,
 * a failover or a proxy restart does to it): the process must live on, answer again, and keep
 * processing, its LISTEN connection back so new cargo are picked up at once, not by the polling
 * fallback. Connections are found by the child's application_name, so nothing else is touched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends, PG_URL, type TestDatabase } from '../helpers/backends.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { freePort, sleep, waitFor } from '../helpers/wait.js';

const pgBackend = (await backends({ childProcesses: true })).find((b) => b.name === 'postgres');

if (pgBackend) {
  describe('dropped PostgreSQL connections on postgres', () => {
    let db: TestDatabase;
    let api: BargeProcess;
    let worker: BargeProcess;
    let url: string;
    const appName = `barge-conn-loss-${process.pid}`;

    before(async () => {
      assertBuildIsFresh();
      db = await pgBackend.create();
      const env = {
        BARGE_DATABASE_URL: db.url,
        BARGE_ENV: 'production',
        BARGE_LOG_LEVEL: 'warn',
        BARGE_MOCK_LATENCY_MS: '0',
        BARGE_BATCH_MAX_WAIT_MS: '0',
        PGAPPNAME: appName,
        HOST: '127.0.0.1',
      };
      // An API process and a worker process: new cargo reach the worker only by NOTIFY (or its
      // 5 s polling fallback), so a prompt pick-up after the drop shows LISTEN came back.
      api = new BargeProcess(['serve', '--role', 'api', '--json'], { ...env, PORT: String(await freePort()) });
      worker = new BargeProcess(['serve', '--role', 'worker', '--json'], env);
      url = (await api.started()).url as string;
      await worker.started();
    });
    after(async () => {
      for (const child of [api, worker]) if (child.alive) await child.stop('SIGKILL');
      await db.drop();
    });

    async function onConnections(sql: string): Promise<number> {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        return (await admin.query(sql, [appName])).rowCount ?? 0;
      } finally {
        await admin.end();
      }
    }
    const terminateConnections = () =>
      onConnections('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1');
    const listening = () =>
      onConnections("select pid from pg_stat_activity where application_name = $1 and query like 'listen %'");

    async function load(key: string, content: string): Promise<string> {
      const res = await fetch(`${url}/cargo/load`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(mockBody(content)),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return (JSON.parse(text) as { cargo_id: string }).cargo_id;
    }

    const status = async (key: string, cargoId: string) =>
      (
        (await (await fetch(`${url}/cargo/${cargoId}/tracking`, { headers: { 'x-api-key': key } })).json()) as {
          status: string;
        }
      ).status;

    test('the process rides through, answers again, and its LISTEN reconnects', async () => {
      const { key } = await createProjectWithKey(db.database);
      const first = await load(key, 'before the drop');
      await waitFor(
        'the first cargo',
        () => status(key, first),
        (s) => s === 'completed',
        { timeoutMs: 10_000 },
      );

      for (let round = 0; round < 3; round++) {
        // The worker's LISTEN connection (one, for both channels) is there (again) before each drop.
        await waitFor('the LISTEN connection', listening, (n) => n >= 1, { timeoutMs: 10_000 });
        // Requests racing the drop: each is answered, with 503 at worst (never a 500).
        const racing = Array.from({ length: 8 }, () =>
          fetch(`${url}/cargo/crg_${'0'.repeat(26)}/tracking`, { headers: { 'x-api-key': key } }).then((r) => r.status),
        );
        const dropped = await terminateConnections();
        assert.ok(dropped > 0, `the children had connections to drop (round ${round})`);
        for (const answered of await Promise.all(racing)) assert.ok([404, 503].includes(answered), String(answered));
        await sleep(300);
        for (const child of [api, worker]) {
          assert.ok(child.alive, `barge died after its connections were dropped:\n${child.stderr}`);
        }
      }
      // Requests in flight may fail; the next ones succeed.
      await waitFor(
        'the API answering',
        async () => (await fetch(`${url}/health/ready`)).status,
        (s) => s === 200,
        {
          timeoutMs: 10_000,
        },
      );
      // LISTEN is back: a new cargo is processed within a second or two, well before the 5 s poll.
      await sleep(1500);
      const started = Date.now();
      const second = await load(key, 'after the drop');
      await waitFor(
        'the second cargo',
        () => status(key, second),
        (s) => s === 'completed',
        { timeoutMs: 10_000 },
      );
      assert.ok(Date.now() - started < 3000, `a new cargo took ${Date.now() - started} ms after the reconnect`);
      for (const child of [api, worker]) assert.ok(child.alive);
    });
  });
}
