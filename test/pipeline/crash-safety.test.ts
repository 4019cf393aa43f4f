/**
 * A real `barge serve` child takes a few thousand svc-mock cargo over HTTP while the test SIGKILLs
 * it at several points of the pipeline (and once stops it gracefully), restarting it on the same
 * database each time. Every cargo that got a 200 must end with exactly one correct result, and
 * nothing may be batched or submitted twice. Runs on SQLite and, when reachable, PostgreSQL: about
 * 25-30 s per backend on a busy two-core machine, so the file stays near a minute.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { freePort, sleep, waitFor } from '../helpers/wait.js';

const TOTAL = 3000;
const IN_FLIGHT = 32;
/**
 * Submissions per second at most: on a fast machine the stops still fall while cargo arrive (a
 * busy two-core machine manages about 250 a second with the stops, so this rarely holds it back).
 */
const MAX_RATE = 400;
const UNFINISHED = ['pending', 'batched', 'processing'];

interface RecordSpec {
  recordId: string;
  marker: string;
  fail: boolean;
}

/** What the test sent as cargo number `index`, and what its result must be. */
interface CargoSpec {
  index: number;
  marker: string;
  fail: boolean;
  records: RecordSpec[] | null;
  body: unknown;
}

const markerOf = (index: number) => `c${String(index).padStart(5, '0')}`;

function cargoSpec(index: number): CargoSpec {
  const marker = markerOf(index);
  if (index % 6 === 1) {
    // 2 or 3 records whose ids are not in sorted order; every tenth such cargo has a failing record.
    const failAt = index % 60 === 1 ? 1 : -1;
    const records = ['zulu', 'alpha', 'mike'].slice(0, 2 + (index % 2)).map((name, r) => ({
      recordId: `${name}-${index}`,
      marker: `${marker}r${r}`,
      fail: r === failAt,
    }));
    return {
      index,
      marker,
      fail: failAt >= 0,
      records,
      body: {
        params: { model: 'svc-mock', max_tokens: 200 },
        records: records.map((r) => ({
          recordId: r.recordId,
          modelInput: {
            messages: [{ role: 'user', content: `${r.marker} ${r.fail ? 'please svc-mock:fail' : 'hello record'}` }],
          },
        })),
      },
    };
  }
  const fail = index % 40 === 3;
  return {
    index,
    marker,
    fail,
    records: null,
    body: {
      params: {
        model: 'svc-mock',
        messages: [{ role: 'user', content: `${marker} ${fail ? 'please svc-mock:fail' : 'hello plain'}` }],
      },
    },
  };
}

/** The spec a stored cargo row was made from, found by the marker at the start of its first prompt. */
function specOfRequest(requestJson: string): CargoSpec {
  const { requests } = JSON.parse(requestJson) as { requests: { modelInput: { messages: { content: string }[] } }[] };
  const first = requests[0]?.modelInput.messages[0]?.content ?? '';
  const match = /^c(\d{5})/.exec(first);
  assert.ok(match, `stored request carries no marker: ${requestJson.slice(0, 200)}`);
  return cargoSpec(Number(match[1]));
}

const words = (text: string) => text.split(/\s+/);

interface Counts {
  accepted: number;
  cargo: number;
  unfinished: number;
  processing: number;
  batched: number;
  submittingBatches: number;
  results: number;
  stagedRecords: number;
}

const backendList = await backends({ childProcesses: true });

for (const backend of backendList) {
  describe(`crash safety of a real barge serve on ${backend.name}`, () => {
    let db: TestDatabase;
    let key: string;
    let port: number;
    let current: BargeProcess | null = null;
    const children: BargeProcess[] = [];
    /** Set when the test is over, passed or not: submission slots stop at once. */
    let over = false;

    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
      ({ key } = await createProjectWithKey(db.database));
      port = await freePort();
    });

    after(async () => {
      // Whatever happened, no child outlives the test, and no submission slot keeps retrying.
      over = true;
      for (const child of children) {
        if (child.alive) {
          child.child.kill('SIGKILL');
          await child.exited;
        }
      }
      await db?.drop();
    });

    // Each process gets its own worker id, so the leases it holds can be told apart.
    const workerIdOf = (child: BargeProcess) => `crash-test-${children.indexOf(child) + 1}`;
    const start = async (): Promise<BargeProcess> => {
      const child = new BargeProcess(['serve', '--role', 'all', '--json'], {
        BARGE_WORKER_ID: `crash-test-${children.length + 1}`,
        BARGE_DATABASE_URL: db.url,
        BARGE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        BARGE_LOG_LEVEL: 'warn',
        BARGE_MOCK_LATENCY_MS: '300',
        BARGE_LEASE_MS: '1500',
        BARGE_BATCH_MAX_WAIT_MS: '50',
        BARGE_BATCH_MAX_SIZE: '200',
        BARGE_RATE_LIMIT_MAX: '1000000',
      });
      children.push(child);
      const { url } = await child.started();
      assert.equal(url, `http://127.0.0.1:${port}`);
      return child;
    };

    test('SIGKILL at several points loses nothing and doubles nothing', async (t) => {
      const started = Date.now();
      const sqlDb = db.database.write;
      const accepted = new Map<string, CargoSpec>();
      const unexpected: string[] = [];
      let networkErrors = 0;

      // The server generation submitters talk to; a killed one is replaced by a restarted one.
      let up: Promise<void> = Promise.resolve();
      let markUp: () => void = () => {};
      let submissionError: unknown = null;
      let stopping = false;

      current = await start();
      const base = `http://127.0.0.1:${port}`;

      // Bounded-concurrency submission: each slot takes the next spec; a spec whose request died
      // with a killed server is sent again (as a new cargo) once the server is back.
      let next = 0;
      let sent = 0;
      const paceFrom = Date.now();
      const retry: number[] = [];
      const slot = async () => {
        let refusedInARow = 0;
        for (;;) {
          const index = retry.shift() ?? (next < TOTAL ? next++ : undefined);
          if (index === undefined || over) return;
          await up;
          const due = paceFrom + (sent++ * 1000) / MAX_RATE;
          if (due > Date.now()) await sleep(due - Date.now());
          const spec = cargoSpec(index);
          let res: Response;
          try {
            res = await fetch(`${base}/cargo/load`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': key },
              body: JSON.stringify(spec.body),
              signal: AbortSignal.timeout(15_000),
            });
          } catch (err) {
            // fetch fails with a TypeError when the connection is refused or reset: the server was
            // killed under this request. Its cargo may or may not be stored; the final check covers
            // every stored row, answered or not. Anything else (a timeout) is a failure.
            if (!(err instanceof TypeError)) throw err;
            networkErrors++;
            retry.push(index);
            // A server that is up yet refuses every request for 10 s has died on its own.
            if (++refusedInARow > 500) throw new Error(`the server refuses requests: ${String(err.cause ?? err)}`);
            await sleep(20);
            continue;
          }
          refusedInARow = 0;
          let text: string;
          try {
            text = await res.text();
          } catch (err) {
            if (!(err instanceof TypeError)) throw err;
            networkErrors++;
            retry.push(index);
            continue;
          }
          if (res.status === 503 && stopping) {
            // Fastify answers 503 on kept-alive connections while it closes: send it again later.
            retry.push(index);
            continue;
          }
          if (res.status === 200) {
            const id = (JSON.parse(text) as { cargo_id: string }).cargo_id;
            assert.ok(!accepted.has(id), `cargo id ${id} returned twice`);
            accepted.set(id, spec);
          } else {
            unexpected.push(`${res.status} ${text.slice(0, 300)}`);
          }
        }
      };
      const submitting = Promise.all(Array.from({ length: IN_FLIGHT }, slot)).then(
        () => undefined,
        (err: unknown) => {
          submissionError = err;
        },
      );

      const counts = async (): Promise<Counts> => {
        const byStatus = await sqlDb
          .selectFrom('cargo')
          .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
          .groupBy('status')
          .execute();
        const n = (status: string) => Number(byStatus.find((r) => r.status === status)?.n ?? 0);
        const one = async (query: Promise<{ n: unknown } | undefined>) => Number((await query)?.n ?? 0);
        return {
          accepted: accepted.size,
          cargo: byStatus.reduce((sum, r) => sum + Number(r.n), 0),
          unfinished: UNFINISHED.reduce((sum, s) => sum + n(s), 0),
          processing: n('processing'),
          batched: n('batched'),
          submittingBatches: await one(
            sqlDb
              .selectFrom('batches')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('status', '=', 'submitting')
              .executeTakeFirst(),
          ),
          results: await one(
            sqlDb
              .selectFrom('results')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirst(),
          ),
          stagedRecords: await one(
            sqlDb
              .selectFrom('record_results')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirst(),
          ),
        };
      };

      // Stops the server when `condition` holds (or after `patienceMs`, noting that it was not
      // seen): SIGKILL, or a graceful SIGTERM that must exit 0 and give up every lease it held. Then
      // starts a new server on the same database.
      const stops: { label: string; signal: NodeJS.Signals; seen: boolean; at: Counts }[] = [];
      const interrupt = async (
        label: string,
        signal: 'SIGKILL' | 'SIGTERM',
        condition: (c: Counts) => boolean,
        patienceMs: number,
      ) => {
        const deadline = Date.now() + patienceMs;
        let seen = false;
        let at = await counts();
        while (!submissionError) {
          if (condition(at)) {
            seen = true;
            break;
          }
          if (Date.now() > deadline) break;
          await sleep(15);
          at = await counts();
        }
        if (submissionError) throw submissionError;
        up = new Promise((resolve) => {
          markUp = resolve;
        });
        const child = current;
        assert.ok(child?.alive, `barge died on its own before '${label}'; stderr:\n${child?.stderr}`);
        stopping = signal === 'SIGTERM';
        const stopAt = Date.now();
        const exit = await child.stop(signal);
        const stoppedIn = Date.now() - stopAt;
        stopping = false;
        if (signal === 'SIGKILL') {
          assert.equal(exit.signal, 'SIGKILL');
        } else {
          assert.deepEqual(
            exit,
            { code: 0, signal: null },
            `graceful stop '${label}' failed; stderr:\n${child.stderr}`,
          );
          const held = await sqlDb
            .selectFrom('batches')
            .select(['id', 'status', 'locked_until'])
            .where('locked_by', '=', workerIdOf(child))
            .execute();
          assert.deepEqual(held, [], `leases still held after the graceful stop '${label}'`);
        }
        stops.push({ label, signal, seen, at });
        const startAt = Date.now();
        current = await start();
        t.diagnostic(
          `${signal} '${label}' (${seen ? 'condition seen' : 'condition NOT seen, stopped anyway'}; ` +
            `stopped in ${stoppedIn} ms, restarted in ${Date.now() - startAt} ms): ${JSON.stringify(at)}`,
        );
        markUp();
      };

      await interrupt('mid-submission', 'SIGKILL', (c) => c.accepted >= 300, 15_000);
      await interrupt('cargo processing', 'SIGKILL', (c) => c.accepted >= 700 && c.processing > 0, 15_000);
      await interrupt(
        'batch formed, not yet submitted',
        'SIGKILL',
        (c) => c.accepted >= 1100 && c.submittingBatches > 0,
        5_000,
      );
      await interrupt('graceful, batches in flight', 'SIGTERM', (c) => c.accepted >= 1400 && c.processing > 0, 15_000);
      await interrupt(
        'records staged, not assembled',
        'SIGKILL',
        (c) => c.accepted >= 1700 && c.stagedRecords > 0,
        5_000,
      );
      await interrupt(
        'results partly stored',
        'SIGKILL',
        (c) => c.accepted >= 2100 && c.results > 0 && c.results < c.cargo,
        15_000,
      );
      await submitting;
      if (submissionError) throw submissionError;
      await interrupt('after the last submission, results partly stored', 'SIGKILL', (c) => c.results < c.cargo, 0);
      t.diagnostic(
        `${accepted.size} accepted, ${networkErrors} requests lost to stops, after ${Date.now() - started} ms`,
      );

      assert.deepEqual(unexpected, [], 'every answered submission is a 200');
      assert.equal(accepted.size, TOTAL);
      // Every stop interrupted work that was under way.
      for (const stop of stops) assert.ok(stop.at.unfinished > 0, `the '${stop.label}' stop found no unfinished cargo`);

      // Bounded wait for the restarted server to finish everything, answered or not.
      await waitFor(
        'every cargo to reach a terminal status',
        async () => (await counts()).unfinished,
        (n) => n === 0,
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      t.diagnostic(`all terminal after ${Date.now() - started} ms`);

      const last = current;
      const exit = await last.stop('SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null }, `graceful stop failed; stderr:\n${last.stderr}`);

      // --- Every answered cargo is stored, terminal, with exactly one correct result.
      const cargo = await sqlDb
        .selectFrom('cargo')
        .innerJoin('cargo_requests', 'cargo_requests.cargo_id', 'cargo.id')
        .leftJoin('results', 'results.cargo_id', 'cargo.id')
        .select([
          'cargo.id',
          'cargo.status',
          'cargo_requests.request',
          'cargo.batch_id',
          'cargo.is_records',
          'results.success',
          'results.response',
          'results.error_message',
        ])
        .execute();
      const resultCounts = await sqlDb
        .selectFrom('results')
        .select(['cargo_id', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('cargo_id')
        .execute();
      const resultsPerCargo = new Map(resultCounts.map((r) => [r.cargo_id, Number(r.n)]));
      const byId = new Map(cargo.map((c) => [c.id, c]));

      for (const [id, spec] of accepted) {
        const row = byId.get(id);
        assert.ok(row, `cargo ${id} got a 200 but is not in the database`);
        assert.equal(specOfRequest(row.request).index, spec.index, `cargo ${id} holds another request`);
      }
      assert.ok(cargo.length >= TOTAL, `${cargo.length} cargo stored`);

      for (const row of cargo) {
        const spec = specOfRequest(row.request);
        const what = `cargo ${row.id} (${spec.marker}${accepted.has(row.id) ? '' : ', answer lost to a kill'})`;
        assert.equal(resultsPerCargo.get(row.id), 1, `${what} has ${resultsPerCargo.get(row.id) ?? 0} results`);
        assert.equal(row.status, spec.fail ? 'failed' : 'completed', what);
        assert.equal(row.success, spec.fail ? 0 : 1, what);
        if (spec.records === null) {
          if (spec.fail) {
            assert.equal(row.response, null, what);
            assert.match(row.error_message ?? '', /svc-mock:fail/, what);
          } else {
            const message = JSON.parse(row.response ?? 'null') as { content: { text: string }[] };
            assert.ok(
              words(message.content[0]?.text ?? '').includes(spec.marker),
              `${what} got another cargo's answer`,
            );
          }
          continue;
        }
        assert.equal(row.is_records, 1, what);
        const response = JSON.parse(row.response ?? 'null') as {
          type: string;
          records: {
            recordId: string;
            success: boolean;
            response: { content: { text: string }[] } | null;
            error: string | null;
          }[];
        };
        assert.equal(response.type, 'records', what);
        assert.deepEqual(
          response.records.map((r) => r.recordId),
          spec.records.map((r) => r.recordId),
          `${what}: records in input order`,
        );
        spec.records.forEach((record, i) => {
          const got = response.records[i];
          assert.ok(got);
          assert.equal(got.success, !record.fail, `${what} record ${record.recordId}`);
          if (record.fail) assert.match(got.error ?? '', /svc-mock:fail/, `${what} record ${record.recordId}`);
          else {
            assert.ok(
              words(got.response?.content[0]?.text ?? '').includes(record.marker),
              `${what} record ${record.recordId}`,
            );
          }
        });
        if (spec.fail) assert.equal(row.error_message, `1 of ${spec.records.length} records failed`, what);
      }

      const stuck = cargo.filter((c) => UNFINISHED.includes(c.status));
      assert.deepEqual(stuck, [], 'no cargo is left pending, batched or processing');
      const staged = await sqlDb
        .selectFrom('record_results')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(staged.n), 0, 'staged record results are dropped once their cargo is assembled');

      // --- Nothing batched or submitted twice.
      const batches = await sqlDb.selectFrom('batches').selectAll().execute();
      const perBatch = new Map<string, number>();
      for (const c of cargo) {
        assert.ok(c.batch_id, `cargo ${c.id} was never batched`);
        perBatch.set(c.batch_id, (perBatch.get(c.batch_id) ?? 0) + 1);
      }
      t.diagnostic(`${batches.length} batches`);
      assert.ok(batches.length >= 10, `expected many batches, got ${batches.length}`);
      for (const batch of batches) {
        assert.equal(batch.status, 'ended', `batch ${batch.id}`);
        assert.equal(batch.end_reason, 'ended', `batch ${batch.id}`);
        assert.equal(batch.cargo_count, perBatch.get(batch.id) ?? 0, `batch ${batch.id} cargo_count`);
        assert.equal(batch.locked_by, null, `batch ${batch.id} still leased by ${batch.locked_by} after SIGTERM`);
        assert.equal(batch.locked_until, null, `batch ${batch.id}`);
      }
      assert.equal(
        [...perBatch.keys()].filter((id) => !batches.some((b) => b.id === id)).length,
        0,
        'every batch_id names a batch',
      );

      // One provider job per batch (a job is never recorded twice), sent every request of the
      // batch's cargo (a cargo belongs to one batch by its batch_id; svc-mock replays the batch).
      const jobs = batches.filter((b) => b.job_id !== null);
      assert.equal(jobs.length, batches.length, 'every batch has its job');
      assert.equal(new Set(jobs.map((j) => j.job_id)).size, jobs.length, 'no job serves two batches');
      const requestsOfBatch = new Map<string, number>();
      for (const c of cargo) {
        const n = specOfRequest(c.request).records?.length ?? 1;
        requestsOfBatch.set(c.batch_id as string, (requestsOfBatch.get(c.batch_id as string) ?? 0) + n);
      }
      for (const job of jobs) {
        assert.equal(job.request_count + job.padding_count, requestsOfBatch.get(job.id), `the job of batch ${job.id}`);
      }

      if (db.database.dialect === 'sqlite') {
        const check = await sql<{ quick_check: string }>`pragma quick_check`.execute(sqlDb);
        assert.deepEqual(check.rows, [{ quick_check: 'ok' }], 'the SQLite file is intact after the kills');
      }
      // What the processes complained about (log level warn and above), for the record.
      const complaints = new Map<string, number>();
      for (const child of children) {
        for (const line of child.jsonLines()) {
          if (typeof line.level !== 'number' || line.level < 40) continue;
          const err = line.err as { message?: string } | undefined;
          const what = `${line.level >= 50 ? 'error' : 'warn'}: ${String(line.msg)}${err?.message ? ` (${err.message})` : ''}`;
          complaints.set(what, (complaints.get(what) ?? 0) + 1);
        }
      }
      for (const [what, n] of complaints) t.diagnostic(`logged ${n}x ${what}`);
      t.diagnostic(`done after ${Date.now() - started} ms`);
    });
  });
}
