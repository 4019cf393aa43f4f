/**
 * Workers wake for what other processes write (Database.listen), on every backend: a cargo loaded
 * through a `barge serve --role api` process is batched by a `--role worker` process at once, not
 * at the worker's idle poll (30 s on SQLite), and a redelivery `barge cargo redeliver` schedules
 * is delivered at once. On a SQLite file the write thread sees other connections' commits
 * (PRAGMA data_version), never its own.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createProject } from '../../src/store/admin/projects.js';
import { openDatabase } from '../../src/store/database.js';
import { RESULTS_STORED_CHANNEL } from '../../src/store/notify.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { serveHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { loadOverHttp } from '../helpers/serve.js';
import { sleep, waitFor } from '../helpers/wait.js';

/** Far below the idle poll of either backend (SQLite 30 s, PostgreSQL 5 s), with room for a busy machine. */
const AT_ONCE_MS = 3_000;

const backendList = await backends({ childProcesses: true });
const sqliteFile = backendList.find((b) => b.name === 'sqlite');

describe('Database.listen on a SQLite file', () => {
  test('calls every handler for a commit of another connection, and none for its own', async (t) => {
    assert.ok(sqliteFile);
    const db = await sqliteFile.create();
    const calls = { cargo: 0, results: 0 };
    assert.ok(db.database.listen, 'a SQLite file with its write thread listens');
    const stop = await db.database.listen({ cargo: () => calls.cargo++, results: () => calls.results++ });
    try {
      // The process's own commits (the write thread's) wake nothing: its workers wake themselves.
      await createProject(db.database, 'own-write', Date.now());
      await sleep(400);
      assert.deepEqual(calls, { cargo: 0, results: 0 });

      // Another connection, as the CLI or another process opens the file.
      const other = openDatabase(db.url, { writeThread: false });
      const committed = Date.now();
      try {
        await createProject(other, 'other-write', committed);
      } finally {
        await other.close();
      }
      await waitFor(
        'both handlers called',
        () => calls,
        (c) => c.cargo > 0 && c.results > 0,
        { timeoutMs: 1_000 },
      );
      t.diagnostic(`woken ${Date.now() - committed} ms after the other connection's commit`);
    } finally {
      await stop();
      await db.drop();
    }
  });
});

for (const backend of backendList) {
  describe(`a worker process wakes for other processes' writes on ${backend.name}`, () => {
    const h = serveHarness(backend);

    /** `--role worker`, then `--role api`, over the suite's database, for both tests; the api's URL. */
    let url = '';
    before(async () => {
      await h.serve('worker', { BARGE_BATCH_MAX_WAIT_MS: '200' });
      url = (await h.serve('api')).url ?? '';
      assert.ok(url);
    });

    const statusOf = async (cargoId: string) =>
      (
        await h.db.database.read
          .selectFrom('cargo')
          .select('status')
          .where('id', '=', cargoId)
          .executeTakeFirstOrThrow()
      ).status;

    test('a cargo loaded through the API process is batched at once', async (t) => {
      const { key } = await createProjectWithKey(h.db.database);
      const loaded = Date.now();
      const cargoId = await loadOverHttp(url, key, mockBody('wake the worker'));
      await waitFor(
        'the cargo batched',
        () => statusOf(cargoId),
        (s) => s !== 'pending',
        {
          timeoutMs: AT_ONCE_MS,
          intervalMs: 20,
        },
      );
      t.diagnostic(`batched ${Date.now() - loaded} ms after its 200 (max wait 200 ms)`);
      await waitFor(
        'the cargo completed',
        () => statusOf(cargoId),
        (s) => s === 'completed',
        { timeoutMs: 10_000 },
      );
    });

    test('a redelivery the CLI schedules is delivered at once', async (t) => {
      const receiver = await startReceiver();
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const cargoId = await loadOverHttp(
          url,
          key,
          mockBody('deliver twice', { callback_url: `${receiver.url}/hook` }),
        );
        await waitFor(
          'the first delivery',
          () => statusOf(cargoId),
          (s) => s === 'callback_delivered',
          {
            timeoutMs: 15_000,
          },
        );

        // What wakes the worker, seen by one more listener: the worker's idle poll (5 s on
        // PostgreSQL) could still meet the time bound below by chance, this could not.
        let wakeUps = 0;
        assert.ok(h.db.database.listen);
        const unlisten = await h.db.database.listen({ [RESULTS_STORED_CHANNEL]: () => wakeUps++ });
        let scheduled = 0;
        try {
          const cli = h.spawn(['cargo', 'redeliver', cargoId], {
            BARGE_DATABASE_URL: h.db.url,
            BARGE_LOG_LEVEL: 'warn',
          });
          assert.deepEqual(await cli.exited, { code: 0, signal: null }, cli.stderr);
          scheduled = Date.now();
          await waitFor(
            'a wake-up for the redelivery',
            () => wakeUps,
            (n) => n > 0,
            { timeoutMs: AT_ONCE_MS },
          );
        } finally {
          await unlisten();
        }
        await waitFor(
          'the second webhook',
          () => receiver.received.length,
          (n) => n === 2,
          {
            timeoutMs: AT_ONCE_MS,
            intervalMs: 20,
          },
        );
        t.diagnostic(`redelivered ${Date.now() - scheduled} ms after the CLI exited`);
      } finally {
        await receiver.close();
      }
    });
  });
}
