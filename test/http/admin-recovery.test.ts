/**
 * Bulk recovery through the admin API over 5,000 callback_failed cargo made by the real pipeline
 * (a receiver that refuses every connection), on a SQLite file and PostgreSQL: the dry-run count
 * and its window, a set fixed when made (a cargo that fails later is not swept in), progress
 * persisted chunk by chunk, a worker that dies holding the lease taken over once it lapses with no
 * cargo redelivered twice, cancel midway, a stopping worker giving its recovery back at once; on
 * PostgreSQL also a `barge serve --role worker` child killed in the middle of a chunk.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { type Clock, ManualClock, systemClock } from '../../src/domain/clock.js';
import { createRecovery } from '../../src/operations/create-recovery.js';
import { RECOVERY_CHUNK, workRecovery } from '../../src/operations/work-recovery.js';
import { insertCargo } from '../../src/store/cargo/insert.js';
import type { Database } from '../../src/store/database.js';
import { claimRecovery, recoverChunk } from '../../src/store/recoveries/work.js';
import { deliveryConfig } from '../delivery/webhook-support.js';
import { adminClient, assertOtherProjectHidden, assertTokenRequired } from '../helpers/admin.js';
import { createProjectWithKey } from '../helpers/app.js';
import { assertDetail, assertInvalidField } from '../helpers/assertions.js';
import { type Backend, backends, PG_URL } from '../helpers/backends.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';
import { failedCargo, refuseDeliveries } from '../helpers/failed-deliveries.js';
import { type Harness, harness } from '../helpers/harness.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Workers that try each delivery once, as many at once as a step takes: the cargo fail fast. */
const workerOptions = (settings: { workerId?: string; leaseMs?: number } = {}) => ({
  latencyMs: 0,
  settings,
  ...deliveryConfig({ retryDelaysMs: [], maxPerHost: 2000, maxInFlight: 2000 }),
});

/** failedCargo over the suite's database, checked. */
async function madeFailed(h: Harness, clock: Clock, projectId: string, batches: { at: number; count: number }[]) {
  const ids = await failedCargo(h.db.database, clock, projectId, batches);
  assert.equal(await countWhere(h.db.database, projectId, 'callback_failed'), ids.length);
  return ids;
}

async function countWhere(database: Database, projectId: string, status: string): Promise<number> {
  const row = await database.read
    .selectFrom('cargo')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('project_id', '=', projectId)
    .where('status', '=', status as 'callback_failed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How many `recovery` deliveries each of these cargo has. */
async function recoveryDeliveries(database: Database, ids: string[]): Promise<Map<string, number>> {
  const counts = new Map(ids.map((id) => [id, 0]));
  const rows = await database.read
    .selectFrom('deliveries')
    .select(['cargo_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('trigger', '=', 'recovery')
    .groupBy('cargo_id')
    .execute();
  for (const row of rows) if (counts.has(row.cargo_id)) counts.set(row.cargo_id, Number(row.n));
  return counts;
}

/** A wait on the child, failing with what it logged (its warnings and errors, not its refused attempts) and the recovery's row. */
async function explained<T>(child: BargeProcess, recovery: () => Promise<unknown>, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    const logged = child.logLines.filter((line) => !line.includes('delivery attempt failed')).slice(-20);
    throw new Error(
      `${(err as Error).message}\nrecovery: ${JSON.stringify(await recovery())}\nchild logs:\n${logged.join('\n')}\n${child.stderr}`,
    );
  }
}

const histogram = (counts: Map<string, number>) => {
  const out: Record<number, number> = {};
  for (const n of counts.values()) out[n] = (out[n] ?? 0) + 1;
  return out;
};

for (const backend of await backends({ childProcesses: true })) {
  describe(`bulk recovery through the admin API on ${backend.name}`, () => {
    // Cargo made ten minutes ago, in two halves a minute apart; the clock moves by hand after that.
    const T0 = Date.now() - 600_000;
    const clock = new ManualClock(T0 + 120_000);
    const h = harness(backend, { clock });
    const admin = adminClient(h);
    const recoveries = (slug: string) => `/projects/${slug}/recoveries`;

    test('5,000 callback_failed cargo: dry run, a fixed set, progress, a dead worker taken over, each cargo redelivered once', async () => {
      const { slug, projectId } = await createProjectWithKey(h.db.database);
      const ids = await madeFailed(h, clock, projectId, [
        { at: T0, count: 2500 },
        { at: T0 + 60_000, count: 2500 },
      ]);
      const token = (await admin.token(slug)).token;
      const call = (method: string, path: string, body?: unknown) => admin.call(method, path, token, body);

      const everything = await call('POST', `${recoveries(slug)}/dry-run`, { since: iso(T0) });
      assert.equal(everything.status, 200, everything.text);
      assert.deepEqual(everything.body, {
        status: 'callback_failed',
        since: iso(T0),
        until: iso(clock.now()),
        count: 5000,
      });
      const firstHalf = await call('POST', `${recoveries(slug)}/dry-run`, { since: iso(T0), until: iso(T0 + 30_000) });
      assert.equal(firstHalf.body.count, 2500);
      const delivered = await call('POST', `${recoveries(slug)}/dry-run`, {
        since: iso(T0),
        status: 'callback_delivered',
      });
      assert.equal(delivered.body.count, 0);
      assertInvalidField(await call('POST', `${recoveries(slug)}/dry-run`, { since: 'yesterday' }), '/since');
      assertInvalidField(await call('POST', `${recoveries(slug)}/dry-run`, { since: iso(T0), until: iso(T0) }), '');
      assertInvalidField(
        await call('POST', `${recoveries(slug)}/dry-run`, { since: iso(T0), status: 'failed' }),
        '/status',
      );
      assertInvalidField(await call('POST', recoveries(slug), { since: iso(clock.now() + 1000) }), '');

      // A cargo of the window still on its way: it fails after the recovery is made.
      const late = pendingCargoRow(projectId, { now: T0 + 60_000, callback_url: 'http://127.0.0.1:9/gone' });
      await insertCargo(h.db.database, [late]);

      const made = await call('POST', recoveries(slug), { since: iso(T0) });
      assert.equal(made.status, 201, made.text);
      const recovery = made.body;
      assert.match(recovery.id, /^rcv_[0-9a-z]{26}$/);
      assert.deepEqual(
        { ...recovery, id: 'x' },
        {
          id: 'x',
          project: slug,
          state: 'running',
          status: 'callback_failed',
          since: iso(T0),
          until: iso(clock.now()),
          total: 5000,
          done: 0,
          redelivered: 0,
          created_at: iso(clock.now()),
          updated_at: iso(clock.now()),
          finished_at: null,
        },
      );
      const shown = async () => (await call('GET', `${recoveries(slug)}/${recovery.id}`)).body;

      // Worker A takes the recovery, redelivers one chunk, and dies holding its lease.
      clock.advance(1000);
      const lease = { workerId: 'worker-a', leaseMs: 60_000 };
      assert.equal((await claimRecovery(h.db.database, { ...lease, now: clock.now() })).id, recovery.id);
      const chunk = await recoverChunk(h.db.database, {
        ...lease,
        recoveryId: recovery.id,
        now: clock.now(),
        size: RECOVERY_CHUNK,
      });
      assert.deepEqual(chunk, { kind: 'progress', redelivered: RECOVERY_CHUNK });
      const afterA = await shown();
      assert.deepEqual([afterA.state, afterA.done, afterA.redelivered], ['running', 500, 500]);

      // Another worker runs (the late cargo fails now, A's redeliveries are attempted), but leaves
      // the recovery alone while A's lease holds.
      const { worker: b } = await h.worker(workerOptions({ workerId: 'worker-b' }));
      const takeTurn = () =>
        workRecovery({ database: h.db.database, clock }, { workerId: 'worker-b', leaseMs: 60_000 });
      clock.advance(1000);
      await b.runUntilIdle();
      assert.equal(
        (
          await h.db.database.read
            .selectFrom('cargo')
            .select('status')
            .where('id', '=', late.id)
            .executeTakeFirstOrThrow()
        ).status,
        'callback_failed',
      );
      assert.deepEqual([(await shown()).done, (await shown()).state], [500, 'running']);

      // Once the lease lapses, it is taken over and finished, a turn at a time as B's loop takes
      // them (the turns only: B's deliverer would then try 4,500 deliveries this test has no use for).
      clock.advance(60_000);
      const turns = [];
      for (let turn = await takeTurn(); turn.recoveryId !== null; turn = await takeTurn()) turns.push(turn);
      assert.equal(turns.at(-1)?.ended, true);
      assert.equal(
        turns.reduce((sum, t) => sum + t.redelivered, 0),
        4500,
      );
      const finished = await shown();
      assert.deepEqual(
        [finished.state, finished.total, finished.done, finished.redelivered, finished.finished_at !== null],
        ['completed', 5000, 5000, 5000, true],
      );
      // A, back from the dead, finds its lease gone: nothing more is done.
      const zombie = await recoverChunk(h.db.database, {
        ...lease,
        recoveryId: recovery.id,
        now: clock.now(),
        size: RECOVERY_CHUNK,
      });
      assert.deepEqual(zombie, { kind: 'stopped' });

      // Every cargo of the set once; the one that failed after the recovery was made, never.
      const counts = await recoveryDeliveries(h.db.database, [...ids, late.id]);
      assert.equal(counts.get(late.id), 0);
      counts.delete(late.id);
      assert.deepEqual(histogram(counts), { 1: 5000 });

      assertDetail(await call('POST', `${recoveries(slug)}/${recovery.id}/cancel`), 409, {
        error: 'recovery_finished',
        message: `Recovery '${recovery.id}' has completed: there is nothing left to cancel.`,
      });
      const listed = await call('GET', recoveries(slug));
      assert.deepEqual(listed.body, { data: [finished] });
      // Its redeliveries fail again, so the next test's workers have none of them to try.
      await refuseDeliveries(h.db.database, clock, projectId);
    });

    test('cancel midway: the chunk done stays, nothing more is redelivered; a stopping worker gives its recovery back at once', async () => {
      const { slug, projectId } = await createProjectWithKey(h.db.database);
      const ids = await madeFailed(h, clock, projectId, [{ at: T0, count: 1000 }]);
      const token = (await admin.token()).token;
      const made = await admin.call('POST', recoveries(slug), token, { since: iso(T0) });
      assert.equal(made.body.total, 1000);
      const lease = { workerId: 'worker-c', leaseMs: 60_000 };
      assert.equal((await claimRecovery(h.db.database, { ...lease, now: clock.now() })).id, made.body.id);
      await recoverChunk(h.db.database, { ...lease, recoveryId: made.body.id, now: clock.now(), size: RECOVERY_CHUNK });

      const canceled = await admin.call('POST', `${recoveries(slug)}/${made.body.id}/cancel`, token);
      assert.equal(canceled.status, 200, canceled.text);
      assert.deepEqual(
        [canceled.body.state, canceled.body.done, canceled.body.redelivered, canceled.body.finished_at],
        ['canceled', 500, 500, iso(clock.now())],
      );
      // Again: answered as it is.
      assert.deepEqual(
        (await admin.call('POST', `${recoveries(slug)}/${made.body.id}/cancel`, token)).body,
        canceled.body,
      );
      const { worker } = await h.worker(workerOptions());
      clock.advance(120_000);
      await worker.runUntilIdle();
      assert.deepEqual((await admin.call('GET', `${recoveries(slug)}/${made.body.id}`, token)).body, canceled.body);
      assert.deepEqual(histogram(await recoveryDeliveries(h.db.database, ids)), { 0: 500, 1: 500 });

      // A worker holding a recovery gives it back when it stops: another takes it at once.
      const again = await admin.call('POST', recoveries(slug), token, { since: iso(T0) });
      assert.equal(again.body.total, 1000);
      const { worker: stopping } = await h.worker(workerOptions({ workerId: 'worker-stopping' }));
      const held = { workerId: 'worker-stopping', leaseMs: 60_000 };
      assert.equal((await claimRecovery(h.db.database, { ...held, now: clock.now() })).id, again.body.id);
      await stopping.close();
      await worker.runUntilIdle();
      const done = (await admin.call('GET', `${recoveries(slug)}/${again.body.id}`, token)).body;
      assert.deepEqual([done.state, done.done, done.redelivered], ['completed', 1000, 1000]);
      assert.deepEqual(histogram(await recoveryDeliveries(h.db.database, ids)), { 1: 500, 2: 500 });
    });

    test('authorization: 401 without a valid token; a project-limited token gets the 404 of an unknown slug for another project', async () => {
      const own = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      const all = (await admin.token()).token;
      const theirs = await admin.call('POST', recoveries(other.slug), all, { since: iso(T0) });
      assert.equal(theirs.status, 201, theirs.text);
      assert.deepEqual(
        [theirs.body.state, theirs.body.total, theirs.body.finished_at],
        ['completed', 0, theirs.body.created_at],
      );
      const routes = (slug: string, id: string): [string, string, unknown?][] => [
        ['POST', `${recoveries(slug)}/dry-run`, { since: iso(T0) }],
        ['POST', recoveries(slug), { since: iso(T0) }],
        ['GET', recoveries(slug)],
        ['GET', `${recoveries(slug)}/${id}`],
        ['POST', `${recoveries(slug)}/${id}/cancel`],
      ];
      await assertTokenRequired(admin, routes(other.slug, theirs.body.id));
      const limited = (await admin.token(own.slug)).token;
      await assertOtherProjectHidden(admin, limited, routes(other.slug, theirs.body.id), other.slug);
      assert.equal((await admin.call('GET', recoveries(other.slug), all)).body.data.length, 1);
      assertDetail(
        await admin.call('GET', `${recoveries(own.slug)}/${theirs.body.id}`, limited),
        404,
        `No recovery '${theirs.body.id}'.`,
      );
    });
  });
}

const postgres = (await backends({ childProcesses: true })).find((b): b is Backend => b.name === 'postgres');
if (postgres) {
  describe('a `barge serve --role worker` killed in the middle of a recovery chunk (PostgreSQL)', () => {
    const h = harness(postgres, { clock: systemClock });

    test('its chunk is rolled back, another worker takes the recovery over when the lease lapses, no cargo is redelivered twice', async () => {
      assertBuildIsFresh();
      const { slug, projectId } = await createProjectWithKey(h.db.database);
      const since = Date.now() - 60_000;
      const ids = await madeFailed(h, systemClock, projectId, [{ at: since, count: 1000 }]);
      const made = await createRecovery({ database: h.db.database, clock: systemClock }, { slug, since: iso(since) });
      assert.ok(made.ok);
      const recoveryId = made.value.id;
      // A cargo of the second chunk held by another transaction: the worker's second chunk waits on it.
      const blockedId = ids[RECOVERY_CHUNK + 10];
      const blocker = new pg.Client({ connectionString: PG_URL });
      await blocker.connect();
      await blocker.query(`set search_path to ${h.db.schema}`);
      await blocker.query('begin');
      await blocker.query('select id from cargo where id = $1 for update', [blockedId]);

      const child = new BargeProcess(['serve', '--role', 'worker', '--json'], {
        BARGE_DATABASE_URL: h.db.url,
        BARGE_ENV: 'production',
        BARGE_LOG_LEVEL: 'warn',
        BARGE_LEASE_MS: '1000',
        BARGE_ALLOW_PRIVATE_CALLBACKS: 'true',
        // Its deliveries of what it redelivers stay few and gentle: they share its ten connections.
        BARGE_DELIVERY_CONCURRENCY: '4',
        BARGE_MOCK_LATENCY_MS: '0',
      });
      try {
        await child.started();
        const progress = () =>
          h.db.database.read
            .selectFrom('recoveries')
            .selectAll()
            .where('id', '=', recoveryId)
            .executeTakeFirstOrThrow();
        await explained(
          child,
          progress,
          waitFor('the first chunk', progress, (r) => r.done === RECOVERY_CHUNK, { timeoutMs: 60_000 }),
        );
        // Its second chunk waits on the held cargo, inside its transaction, holding the lease.
        await explained(
          child,
          progress,
          waitFor(
            'the second chunk to wait on the held cargo',
            async () => {
              // Inside the blocker's transaction pg_stat_activity is a snapshot taken at its first
              // read: cleared before each look, or a first look before the wait began is all it shows.
              await blocker.query('select pg_stat_clear_snapshot()');
              return (
                await blocker.query(
                  `select wait_event_type, left(query, 60) as query from pg_stat_activity
                 where datname = current_database() and pid <> pg_backend_pid() and state = 'active'`,
                )
              ).rows as { wait_event_type: string | null; query: string }[];
            },
            // The statement's text is cut at track_activity_query_size: its start names it.
            (rows) =>
              rows.some(
                (r) => r.wait_event_type === 'Lock' && r.query.startsWith('select "c"."id", "c"."callback_url"'),
              ),
            { timeoutMs: 60_000 },
          ),
        );
        await child.stop('SIGKILL');
        await blocker.query('rollback');
        // The killed worker's server process ends its transaction once it has the row and finds the
        // connection gone: the recovery's row is free then.
        await waitFor(
          'the killed worker to let go of the recovery',
          async () =>
            (await blocker.query('select id from recoveries where id = $1 for update skip locked', [recoveryId])).rows
              .length,
          (n) => n === 1,
          { timeoutMs: 10_000 },
        );
      } finally {
        if (child.alive) await child.stop('SIGKILL');
        await blocker.end();
      }
      const atKill = await h.db.database.read
        .selectFrom('recoveries')
        .selectAll()
        .where('id', '=', recoveryId)
        .executeTakeFirstOrThrow();
      assert.deepEqual([atKill.status, atKill.done, atKill.redelivered], ['running', RECOVERY_CHUNK, RECOVERY_CHUNK]);
      assert.notEqual(atKill.locked_by, null, 'killed holding the lease');
      // Of its second chunk, nothing was committed.
      assert.deepEqual(histogram(await recoveryDeliveries(h.db.database, ids)), { 0: 500, 1: 500 });

      const { worker } = await h.worker(workerOptions({ workerId: 'after-kill', leaseMs: 1000 }));
      await waitFor(
        'the lease to lapse',
        () => Date.now(),
        (now) => now > Number(atKill.locked_until),
        { timeoutMs: 5000 },
      );
      await worker.runUntilIdle();
      const finished = await h.db.database.read
        .selectFrom('recoveries')
        .selectAll()
        .where('id', '=', recoveryId)
        .executeTakeFirstOrThrow();
      assert.deepEqual([finished.status, finished.done, finished.redelivered], ['completed', 1000, 1000]);
      assert.deepEqual(histogram(await recoveryDeliveries(h.db.database, ids)), { 1: 1000 });
    });
  });
}
