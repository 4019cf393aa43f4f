/**
 * A real PostgreSQL server killed (`pg_ctl stop -m immediate`: every connection cut, no
 * shutdown) for a few seconds under load, then started again, under a deployment of 2 API and
 * 2 worker processes. The server is the test's own (test/helpers/private-postgres.ts): the shared
 * one is never stopped. Every process must live through it; requests during the outage are
 * answered 503 with `detail` in bounded time, never hang and never crash anything; every cargo
 * answered 200 before, during or after reaches callback_delivered with its webhook received;
 * new cargo after the recovery are picked up through LISTEN, well before the 5 s polling
 * fallback; and each process reports the outage in a few lines, not one per failed step.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres } from '../helpers/private-postgres.js';
import { startReceiver } from '../helpers/receiver.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { freePort, sleep, waitFor } from '../helpers/wait.js';

const OUTAGE_MS = 4500;
/** Cargo loaded before, during and after the outage, a few at a time (bounded). */
const LOADS = { before: 60, after: 60 };
const CONCURRENCY = 4;
/** A request that takes longer than this (the client gives up) counts as a hang. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The workers' polling fallback on PostgreSQL (idleMaxMs in src/service.ts). */
const POLL_MS = 5000;

if (await privatePostgresAvailable()) {
  describe('a PostgreSQL restart under load', () => {
    let server: PrivatePostgres;
    let database: Database;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const apis: BargeProcess[] = [];
    const workers: BargeProcess[] = [];
    const everyone = () => [...apis, ...workers];
    const appName = `barge-restart-${process.pid}`;

    before(async () => {
      assertBuildIsFresh();
      server = await startPrivatePostgres();
      // The test's own connections see the outage too: they stay quiet about it.
      database = openDatabase(server.url, { onOutage: () => {} });
      await migrate(database);
      receiver = await startReceiver();
      const env = {
        BARGE_DATABASE_URL: server.url,
        BARGE_ENV: 'production',
        BARGE_ALLOW_PRIVATE_CALLBACKS: 'true',
        BARGE_LOG_LEVEL: 'warn',
        BARGE_MOCK_LATENCY_MS: '0',
        BARGE_BATCH_MAX_WAIT_MS: '0',
        BARGE_KEY_CACHE_TTL_MS: '0',
        // A claim whose commit the server made but whose answer the restart cut off (or a step
        // stuck on a connection the restart killed) is taken over when its lease lapses, as
        // docs/security.md says; a short lease lets the test see that within its wait.
        BARGE_LEASE_MS: '5000',
        PGAPPNAME: appName,
        HOST: '127.0.0.1',
      };
      for (let i = 0; i < 2; i++) {
        apis.push(new BargeProcess(['serve', '--role', 'api', '--json'], { ...env, PORT: String(await freePort()) }));
        workers.push(new BargeProcess(['serve', '--role', 'worker', '--json'], env));
      }
      for (const child of everyone()) await child.started();
    });

    after(async () => {
      for (const child of everyone()) if (child.alive) await child.stop('SIGKILL');
      await receiver?.close();
      await database?.close().catch(() => {});
      await server?.destroy();
    });

    const urls = () => apis.map((a) => a.jsonLines().find((l) => typeof l.url === 'string')?.url as string);

    async function onServer<T>(query: string, read: (rows: pg.QueryResult) => T): Promise<T> {
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      try {
        return read(await admin.query(query, [appName]));
      } finally {
        await admin.end();
      }
    }
    const listening = () =>
      onServer(
        "select count(*)::int as n from pg_stat_activity where application_name = $1 and query like 'listen %'",
        (r) => r.rows[0].n as number,
      );

    interface Answer {
      status: number | 'hang' | 'network error';
      ms: number;
      body: string;
      cargoId?: string;
    }

    /** One request with a deadline; a 503 must carry `detail`, anything but 200/404/503 is wrong. */
    async function call(url: string, path: string, init: RequestInit = {}): Promise<Answer> {
      const started = Date.now();
      try {
        const res = await fetch(url + path, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const body = await res.text();
        return { status: res.status, ms: Date.now() - started, body };
      } catch (err) {
        const hang = err instanceof Error && err.name === 'TimeoutError';
        return { status: hang ? 'hang' : 'network error', ms: Date.now() - started, body: String(err) };
      }
    }

    let loaded = 0;
    async function load(key: string, tag: string): Promise<Answer> {
      const url = urls()[loaded++ % 2] as string;
      const answer = await call(url, '/cargo/load', {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(mockBody(`${tag} ${loaded}`, { callback_url: `${receiver.url}/hook` })),
      });
      if (answer.status === 200) answer.cargoId = (JSON.parse(answer.body) as { cargo_id: string }).cargo_id;
      return answer;
    }

    /**
     * Loads `count` cargo (or until `until.stop` says so), CONCURRENCY at a time, each loader
     * pausing `pauseMs` between requests (a client that keeps trying through an outage, bounded).
     */
    async function loadMany(
      key: string,
      tag: string,
      until: { count?: number; stop?: () => boolean; pauseMs?: number },
    ) {
      const answers: Answer[] = [];
      let started = 0;
      const more = () => (until.count !== undefined ? started < until.count : !until.stop?.());
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (more()) {
            started++;
            answers.push(await load(key, tag));
            if (until.pauseMs) await sleep(until.pauseMs);
          }
        }),
      );
      return answers;
    }

    const deliveredIds = () =>
      new Set(receiver.received.map((r) => (JSON.parse(r.body) as { cargo_id: string }).cargo_id));

    async function statuses(ids: string[]): Promise<Record<string, number>> {
      const rows = await database.read
        .selectFrom('cargo')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .where('id', 'in', ids)
        .groupBy('status')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    }

    test('killed for 4.5 s: every process lives, 503s meanwhile, nothing lost, LISTEN back', async (t) => {
      const { key } = await createProjectWithKey(database);
      assert.equal(await listening(), 2, 'each worker holds one LISTEN connection');

      const before = await loadMany(key, 'before', { count: LOADS.before });
      assert.deepEqual(
        before.filter((a) => a.status !== 200),
        [],
        'before the outage every load is accepted',
      );

      // The outage, with load and reads going on throughout (each answered, 503 at worst).
      let serverDown = true;
      const stopped = Date.now();
      await server.stopImmediate();
      const during = loadMany(key, 'during', { stop: () => !serverDown, pauseMs: 100 });
      const reads = (async () => {
        const answers: Answer[] = [];
        while (serverDown) {
          for (const url of urls()) {
            answers.push(await call(url, '/health/ready'));
            answers.push(await call(url, `/cargo/${before[0]?.cargoId}/tracking`, { headers: { 'x-api-key': key } }));
          }
          await sleep(200);
        }
        return answers;
      })();
      await sleep(OUTAGE_MS - (Date.now() - stopped));
      await server.start();
      const restarted = Date.now();
      serverDown = false;
      // From now on: how soon both workers LISTEN again.
      const listenBack = waitFor('both workers LISTENing again', listening, (n) => n === 2, {
        timeoutMs: POLL_MS * 2,
        intervalMs: 20,
      }).then(() => Date.now() - restarted);
      const duringAnswers = [...(await during), ...(await reads)];

      for (const child of everyone()) assert.ok(child.alive, `a barge process died in the outage:\n${child.stderr}`);
      const unexpected = duringAnswers.filter((a) => ![200, 404, 503].includes(a.status as number));
      assert.deepEqual(unexpected, [], 'during the outage: answered 200, 404 or 503, never a hang, a 500 or a reset');
      for (const answer of duringAnswers.filter((a) => a.status === 503)) {
        assert.equal(typeof (JSON.parse(answer.body) as { detail?: unknown }).detail, 'string', answer.body);
      }
      const unavailable = duringAnswers.filter((a) => a.status === 503).length;
      t.diagnostic(`during the outage: ${duringAnswers.length} requests, ${unavailable} answered 503`);
      assert.ok(unavailable > 0, 'requests during the outage were answered 503');

      // Requests after the recovery succeed: on each API process, once it has reconnected.
      for (const url of urls()) {
        await waitFor(
          `${url} ready again`,
          async () => (await call(url, '/health/ready')).status,
          (s) => s === 200,
          { timeoutMs: 5000 },
        );
      }
      t.diagnostic(`both API processes ready ${Date.now() - restarted} ms after the restart`);
      const afterAnswers = await loadMany(key, 'after', { count: LOADS.after });
      assert.deepEqual(
        afterAnswers.filter((a) => a.status !== 200),
        [],
        'after the recovery every load is accepted',
      );

      // Every accepted cargo reaches its final status with its webhook delivered: nothing lost.
      const accepted = [...before, ...duringAnswers, ...afterAnswers]
        .map((a) => a.cargoId)
        .filter((id): id is string => id !== undefined);
      t.diagnostic(`${accepted.length} cargo accepted in all`);
      await waitFor(
        `all ${accepted.length} cargo callback_delivered`,
        () => statuses(accepted),
        (s) => s.callback_delivered === accepted.length,
        { timeoutMs: 20_000, intervalMs: 200 },
      ).catch(async (err: Error) => {
        // Say what holds them: unfinished batches and deliveries, their leases and last errors.
        const now = Date.now();
        const batches = await database.read
          .selectFrom('batches')
          .select(['id', 'status', 'attempts', 'last_error', 'locked_by', 'locked_until', 'next_check_at'])
          .where('status', '!=', 'ended')
          .execute();
        const deliveries = await database.read
          .selectFrom('deliveries')
          .select(['id', 'attempts', 'last_error', 'locked_by', 'locked_until', 'next_attempt_at'])
          .where('status', '=', 'pending')
          .execute();
        const relative = (rows: Record<string, unknown>[]) =>
          rows.map((r) =>
            Object.fromEntries(
              Object.entries(r).map(([k, v]) => [
                k,
                typeof v === 'number' && v > 1e12 ? `now${v - now >= 0 ? '+' : ''}${v - now}ms` : v,
              ]),
            ),
          );
        throw new Error(
          `${err.message}\nunfinished batches: ${JSON.stringify(relative(batches))}\n` +
            `pending deliveries: ${JSON.stringify(relative(deliveries))}\n` +
            `worker logs:\n${workers.map((w) => w.logLines.filter((l) => !l.includes('"level":30')).join('\n')).join('\n--\n')}`,
        );
      });
      const delivered = deliveredIds();
      assert.deepEqual(
        accepted.filter((id) => !delivered.has(id)),
        [],
        'every accepted cargo had its webhook received',
      );
      t.diagnostic(`all delivered ${Date.now() - restarted} ms after the restart`);

      // LISTEN came back in each worker, promptly: new cargo are picked up by NOTIFY, far sooner
      // than the polling fallback would.
      const listenMs = await listenBack;
      t.diagnostic(`both workers LISTEN again ${listenMs} ms after the restart`);
      assert.ok(listenMs < POLL_MS / 2, `LISTEN came back ${listenMs} ms after the restart`);
      for (let i = 0; i < 3; i++) {
        await sleep(300);
        const start = Date.now();
        const probe = await load(key, 'probe');
        assert.equal(probe.status, 200, probe.body);
        await waitFor(
          'the probe webhook',
          () => deliveredIds().has(probe.cargoId as string),
          (seen) => seen,
          { timeoutMs: POLL_MS * 2, intervalMs: 20 },
        );
        const took = Date.now() - start;
        t.diagnostic(`probe ${i + 1}: webhook ${took} ms after the load`);
        assert.ok(took < POLL_MS / 3, `a new cargo took ${took} ms: picked up by polling, not by LISTEN`);
      }

      // Each process told of the outage once, when it began and when it ended: not once per
      // failed request, readiness probe, connection or worker step. (A process that starts before
      // the project exists also warns once that no key works yet.)
      for (const child of everyone()) {
        assert.ok(child.alive, `a barge process died after the outage:\n${child.stderr}`);
        const lines = child
          .jsonLines()
          .filter((l) => typeof l.level === 'number' && (l.level as number) >= 40)
          .map((l) => String(l.msg))
          .filter((msg) => !msg.startsWith('no project yet'));
        assert.deepEqual(
          lines.map((msg) => msg.replace(/ \(.*\);.*| after [\d.]+ s$/, '')),
          ['database unreachable', 'database reachable again'],
          `warn/error lines:\n${lines.join('\n')}`,
        );
        assert.doesNotMatch(child.stderr, /database|postgres|connection/i, 'stderr');
      }
    });
  });
}
