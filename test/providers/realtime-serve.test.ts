/**
 * The openai-compatible provider in `barge serve` children against the real-time endpoint
 * emulator: max_concurrency holds across two worker processes on PostgreSQL (and in one on a
 * SQLite file), a worker SIGKILLed mid-batch loses nothing, and `barge provider check` reports each
 * endpoint.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runBarge } from '../helpers/cli.js';
import { serveHarness } from '../helpers/harness.js';
import { realtimeBody, realtimeCatalogText, SERVED_MODEL } from '../helpers/realtime.js';
import { type RealtimeEmulator, startRealtimeEmulator } from '../helpers/realtime-emulator.js';
import { type BargeProcess, loadOverHttp } from '../helpers/serve.js';
import { freePort, waitFor } from '../helpers/wait.js';

const KEY = 'sk-gpu-one-serve';

function catalogFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'barge-realtime-')), 'catalog.json');
  writeFileSync(path, text);
  return path;
}

/** Results of the cargo as GET /cargo/{id}/result answers them. */
async function results(url: string, key: string, ids: string[]) {
  return Promise.all(
    ids.map(async (id) => {
      const res = await fetch(`${url}/cargo/${id}/result`, { headers: { 'x-api-key': key } });
      return { status: res.status, body: res.status === 200 ? ((await res.json()) as Record<string, any>) : null };
    }),
  );
}

for (const backend of await backends({ childProcesses: true })) {
  describe(`openai-compatible in barge serve on ${backend.name}`, () => {
    const h = serveHarness(backend);
    let emu: RealtimeEmulator;
    before(async () => {
      emu = await startRealtimeEmulator({ apiKey: KEY, models: [SERVED_MODEL] });
    });
    after(() => emu?.close());
    // The children a test started are stopped when it ends, passed or failed: a failure's workers
    // would otherwise hold leases and take requests in the next test.
    const running: BargeProcess[] = [];
    const serve = async (role: 'all' | 'api' | 'worker', env: Record<string, string>) => {
      const started = await h.serve(role, env);
      running.push(started.child);
      return started;
    };
    afterEach(async () => {
      emu.setLatency(0);
      for (const child of running.splice(0)) if (child.alive) await child.stop('SIGKILL');
    });
    const envFor = (maxConcurrency: number, timeoutMs = 5_000) => ({
      BARGE_MODELS_FILE: catalogFile(
        realtimeCatalogText({ baseUrl: emu.baseURL, maxConcurrency, timeoutMs, apiKeyEnv: 'GPU1_KEY' }),
      ),
      GPU1_KEY: KEY,
      BARGE_BATCH_MAX_WAIT_MS: '0',
      BARGE_BATCH_MAX_SIZE: '10',
    });

    const workers = backend.name === 'postgres' ? 2 : 1;
    test(`never more than max_concurrency in flight across ${workers} worker process(es)`, async () => {
      const env = envFor(3);
      // `all` is the API and a worker; PostgreSQL gets a second worker process.
      const [{ url, child: api }, ...started] = await Promise.all([
        serve('all', env),
        ...Array.from({ length: workers - 1 }, () => serve('worker', env)),
      ]);
      const { key } = await createProjectWithKey(h.db.database);
      // 12 rounds of 250 ms: a worker that did not submit a batch finds its requests within a
      // second (the runner's recheck), so every process takes part even on a loaded machine.
      emu.setLatency(250);
      emu.resetMeter();
      const ids: string[] = [];
      for (let i = 0; i < 36; i++) ids.push(await loadOverHttp(url as string, key, realtimeBody(`meter ${i}`)));
      // Who holds leases, sampled while they run: every worker process takes part.
      const holders = new Set<string>();
      const sampling = (async () => {
        while (emu.answered < 36) {
          const rows = await h.db.database.read
            .selectFrom('realtime_requests')
            .select('locked_by')
            .where('locked_until', 'is not', null)
            .execute();
          for (const r of rows) holders.add(r.locked_by as string);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const done = await waitFor(
        'every cargo answered',
        () => results(url as string, key, ids),
        (all) => all.every((r) => r.status === 200),
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      await sampling;
      assert.ok(done.every((r) => r.body?.success === true));
      assert.equal(emu.maxInFlight, 3, 'the endpoint saw exactly max_concurrency at once at most');
      assert.equal(holders.size, workers, `leases held by ${[...holders].join(', ')}`);
      for (const { child } of started) await child.stop('SIGTERM');
      await api.stop('SIGTERM');
    });

    test('a worker stopped with SIGTERM mid-batch finishes what it sent and gives back the rest: none sent twice', async () => {
      const env = { ...envFor(4, 2_000), BARGE_LEASE_MS: '2000' };
      const [{ url, child: api }, first] = await Promise.all([serve('api', env), serve('worker', env)]);
      const { key } = await createProjectWithKey(h.db.database);
      emu.setLatency(300);
      const texts = Array.from({ length: 20 }, (_, i) => `term ${i}`);
      const ids: string[] = [];
      for (const text of texts) ids.push(await loadOverHttp(url as string, key, realtimeBody(text)));
      await waitFor(
        'some requests sent',
        () => texts.filter((t) => emu.tries(t) > 0).length,
        (n) => n >= 6,
        {
          timeoutMs: 20_000,
          intervalMs: 10,
        },
      );
      await first.child.stop('SIGTERM');
      // Nothing is left leased: neither a request nor a slot.
      const read = h.db.database.read;
      const leased = await read
        .selectFrom('realtime_requests')
        .select('custom_id')
        .where('locked_by', 'is not', null)
        .execute();
      const slots = await read.selectFrom('realtime_slots').select('slot').where('locked_by', 'is not', null).execute();
      assert.deepEqual([leased, slots], [[], []]);
      await serve('worker', env);
      const done = await waitFor(
        'every cargo answered after the restart',
        () => results(url as string, key, ids),
        (all) => all.every((r) => r.status === 200),
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      assert.ok(done.every((r) => r.body?.success === true));
      assert.deepEqual(
        texts.filter((t) => emu.tries(t) !== 1),
        [],
        'each request sent once',
      );
      await api.stop('SIGTERM');
    });

    test('a worker SIGKILLed mid-batch loses nothing; only requests in flight are sent twice', async () => {
      // timeout 400 ms: a request's lease is 800 ms, and a batch's 2 s, so the restarted worker
      // takes the lost work over soon.
      const env = { ...envFor(4, 400), BARGE_LEASE_MS: '2000' };
      const [{ url, child: api }, first] = await Promise.all([serve('api', env), serve('worker', env)]);
      const { key } = await createProjectWithKey(h.db.database);
      emu.setLatency(150);
      const texts = Array.from({ length: 30 }, (_, i) => `crash ${i}`);
      const ids: string[] = [];
      for (const text of texts) ids.push(await loadOverHttp(url as string, key, realtimeBody(text)));
      await waitFor(
        'a third of the requests sent',
        () => texts.filter((t) => emu.tries(t) > 0).length,
        (n) => n >= 10,
        { timeoutMs: 20_000, intervalMs: 10 },
      );
      await first.child.stop('SIGKILL');
      await serve('worker', env);
      const done = await waitFor(
        'every cargo answered after the restart',
        () => results(url as string, key, ids),
        (all) => all.every((r) => r.status === 200),
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      done.forEach((r, i) => {
        assert.equal(r.body?.success, true, JSON.stringify(r.body));
        assert.deepEqual(r.body?.response.content, [{ type: 'text', text: `echo: ${texts[i]}` }]);
      });
      const twice = texts.filter((t) => emu.tries(t) > 1);
      assert.ok(texts.every((t) => emu.tries(t) <= 2));
      // In flight at the kill: sent (at most max_concurrency, 4) or answered with the answer not yet
      // stored (the write that stores it takes milliseconds; at 150 ms a request, a few at most).
      assert.ok(twice.length <= 8, `sent twice: ${twice.join(', ')} (max_concurrency is 4)`);
      assert.ok(texts.filter((t) => emu.tries(t) === 1).length >= 22);
      await api.stop('SIGTERM');
    });
  });
}

describe('barge provider check openai-compatible', () => {
  let emu: RealtimeEmulator;
  before(async () => {
    emu = await startRealtimeEmulator({ apiKey: KEY, models: [SERVED_MODEL] });
  });
  after(() => emu?.close());
  // The check opens no database; the CLI wants a URL all the same.
  const NO_DATABASE = `sqlite:${join(tmpdir(), 'barge-provider-check-unused.sqlite')}`;
  const envFor = (maxConcurrency: number) => ({
    BARGE_MODELS_FILE: catalogFile(
      realtimeCatalogText({ baseUrl: emu.baseURL, maxConcurrency, timeoutMs: 5_000, apiKeyEnv: 'GPU1_KEY' }),
    ),
    GPU1_KEY: KEY,
  });

  test('barge provider check reports each endpoint: reachable, the model listed, the latency', async () => {
    const env = envFor(2);
    const ok = await runBarge(NO_DATABASE, ['provider', 'check', 'openai-compatible'], env);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^Provider check of openai-compatible: passed/);
    assert.match(ok.stdout, new RegExp(`endpoint gpu-1 +ok +reachable \\(\\d+ ms\\); listed: ${SERVED_MODEL}`));

    // A model the server does not list, and an endpoint nobody answers at.
    const missing = catalogFile(
      realtimeCatalogText({ baseUrl: emu.baseURL, maxConcurrency: 2, timeoutMs: 5_000 }).replace(
        SERVED_MODEL,
        'other/model',
      ),
    );
    const notListed = await runBarge(NO_DATABASE, ['provider', 'check', 'openai-compatible', '--json'], {
      BARGE_MODELS_FILE: missing,
    });
    assert.equal(notListed.code, 1);
    const report = JSON.parse(notListed.stdout);
    assert.equal(report.ok, false);
    // The emulator wants a key this catalog does not give: GET /models answers 401.
    assert.match(report.capabilities[0].detail, /authentication_error: invalid api key/);

    const nobody = `http://127.0.0.1:${await freePort()}/v1`;
    const down = catalogFile(realtimeCatalogText({ baseUrl: nobody, maxConcurrency: 2, timeoutMs: 2_000 }));
    const unreachable = await runBarge(NO_DATABASE, ['provider', 'check', 'openai-compatible'], {
      BARGE_MODELS_FILE: down,
    });
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stdout,
      /endpoint gpu-1 +failed +unreachable at http:\/\/127\.0\.0\.1:\d+\/v1: ECONNREFUSED/,
    );

    // Its api_key_env unset here: the endpoint is not enabled.
    const off = await runBarge(NO_DATABASE, ['provider', 'check', 'openai-compatible'], {
      BARGE_MODELS_FILE: env.BARGE_MODELS_FILE,
    });
    assert.notEqual(off.code, 0);
    assert.match(off.stderr, /provider 'openai-compatible' is not enabled/);
  });
});
