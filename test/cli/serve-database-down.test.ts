/**
 * `barge serve` started while its PostgreSQL does not answer (a port nothing listens on: the
 * test's own server, stopped) stays up: /health answers 200, /health/ready and requests 503 with
 * `detail`; once the server is started it migrates, and then serves and runs its workers. A
 * database that answers but refuses (one that does not exist) still ends the start, exit 1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Database, openDatabase } from '../../src/store/database.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres } from '../helpers/private-postgres.js';
import { assertBuildIsFresh, BargeProcess, loadOverHttp } from '../helpers/serve.js';
import { freePort, sleep, waitFor } from '../helpers/wait.js';

if (await privatePostgresAvailable()) {
  describe('barge serve with PostgreSQL down at start', () => {
    let server: PrivatePostgres;
    let database: Database | undefined;
    const children: BargeProcess[] = [];
    const serve = async (databaseUrl: string) => {
      const child = new BargeProcess(['serve', '--role', 'all', '--json'], {
        BARGE_DATABASE_URL: databaseUrl,
        BARGE_ENV: 'production',
        BARGE_LOG_LEVEL: 'info',
        BARGE_MOCK_LATENCY_MS: '0',
        BARGE_BATCH_MAX_WAIT_MS: '0',
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
      });
      children.push(child);
      return child;
    };

    before(async () => {
      assertBuildIsFresh();
      server = await startPrivatePostgres();
    });

    after(async () => {
      for (const child of children) if (child.alive) await child.stop('SIGKILL');
      await database?.close().catch(() => {});
      await server?.destroy();
    });

    test('a database that answers but refuses ends the start with exit 1 and the error', async () => {
      const child = await serve(`postgres://postgres@127.0.0.1:${server.port}/no_such_database`);
      const exit = await Promise.race([child.exited, sleep(15_000).then(() => 'running' as const)]);
      assert.deepEqual(exit, { code: 1, signal: null }, child.stderr);
      assert.match(child.stderr, /database "no_such_database" does not exist/);
      assert.deepEqual(
        child.lines.filter(Boolean).map((l) => JSON.parse(l)),
        [{ error: 'database "no_such_database" does not exist' }],
      );
    });

    test('it answers 503 until the database answers, then migrates, serves and runs its workers', async () => {
      await server.stopImmediate();
      const child = await serve(server.url);
      const { url } = (await child.started()) as { url: string };
      // A few of its retries go by: it is still there.
      await sleep(2500);
      assert.ok(child.alive, child.stderr);
      assert.equal((await fetch(`${url}/health`)).status, 200);
      for (const [method, path] of [
        ['GET', '/health/ready'],
        ['POST', '/cargo/load'],
        ['GET', '/cargo/crg_01jd5q3k8m9x2v4w6y8z0a1b2c/tracking'],
      ] as const) {
        const res = await fetch(url + path, {
          method,
          headers: { 'x-api-key': 'barge_sk_00000000000000000000000000000000', 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: JSON.stringify(mockBody()) } : {}),
        });
        assert.deepEqual([res.status, await res.json()], [503, { detail: 'Database is not reachable.' }], path);
      }

      await server.start();
      await waitFor(
        '/health/ready to answer 200',
        async () => (await fetch(`${url}/health/ready`)).status,
        (status) => status === 200,
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      // The tables are barge's: it migrated the database it waited for.
      database = openDatabase(server.url, { onOutage: () => {} });
      const { key } = await createProjectWithKey(database);
      const cargoId = await loadOverHttp(url, key, mockBody('after the wait'));
      await waitFor(
        'the cargo to complete (the workers run)',
        async () =>
          (
            (await (await fetch(`${url}/cargo/${cargoId}/tracking`, { headers: { 'x-api-key': key } })).json()) as {
              status: string;
            }
          ).status,
        (status) => status === 'completed',
        { timeoutMs: 20_000, intervalMs: 100 },
      );

      // The wait is logged as any outage is, in two lines (the second when the outage watch's probe,
      // up to a second apart, sees the database), and the preparation once.
      const logged = await waitFor(
        'the end of the outage to be logged',
        () => child.jsonLines().map((l) => ({ level: l.level as number, msg: String(l.msg) })),
        (lines) => lines.some((l) => l.msg.startsWith('database reachable again')),
        { timeoutMs: 5000 },
      );
      // (The production start's hint that no project exists yet is a warning of its own.)
      assert.deepEqual(
        logged
          .filter((l) => l.level >= 40 && !l.msg.startsWith('no project yet'))
          .map((l) => l.msg.replace(/ \(.*\);.*| after [\d.]+ s$/, '')),
        ['database unreachable', 'database reachable again'],
        child.logLines.filter((l) => !l.startsWith('{"level":30')).join('\n'),
      );
      assert.equal(logged.filter((l) => l.msg === 'database prepared').length, 1);
      assert.deepEqual(await child.stop('SIGTERM'), { code: 0, signal: null }, child.stderr);
    });
  });
}
