/**
 * GET /metrics in the Prometheus text format: behind BARGE_METRICS_TOKEN when it is set, with the
 * API's counters and the store's queue gauges; a `--role worker` process serves its own (provider
 * calls, cargo moves) on BARGE_METRICS_PORT; and a freshly started `barge serve` already has a
 * series at 0 for every known label combination of its counters and histograms.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness, serveHarness } from '../helpers/harness.js';

const TOKEN = 'scrape-token-0123456789';

/** The value of one sample line, e.g. `barge_cargo_pending{provider="mock",model="svc-mock"}`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return undefined;
}

for (const backend of await backends()) {
  describe(`metrics on ${backend.name}`, () => {
    const clock = new ManualClock(Date.now());
    const h = harness(backend, { clock, config: { metrics: { token: TOKEN, workerPort: 0 } } });

    test('the API serves /metrics to the token holder only', async () => {
      const anonymous = await fetch(`${h.app.url}/metrics`);
      assert.equal(anonymous.status, 401);
      assert.match(((await anonymous.json()) as { detail: string }).detail, /BARGE_METRICS_TOKEN/);
      const wrong = await fetch(`${h.app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
      assert.equal(wrong.status, 401);

      const { key } = await createProjectWithKey(h.db.database);
      for (let i = 0; i < 3; i++) {
        const res = await h.app.request('POST', '/cargo/load', { key, body: mockBody(`metrics ${i}`) });
        assert.equal(res.status, 200, res.text);
      }
      const other = await createProjectWithKey(h.db.database);
      assert.equal(
        (await h.app.request('POST', '/cargo/load', { key: other.key, body: mockBody('other') })).status,
        200,
      );
      const res = await fetch(`${h.app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      const text = await res.text();
      const labels = { provider: 'mock', model: 'svc-mock' };
      assert.equal(sample(text, 'barge_cargo_moves_total', { status: 'pending', ...labels }), 4);
      assert.equal(sample(text, 'barge_cargo_pending', labels), 4);
      assert.equal(sample(text, 'barge_projects_waiting', labels), 2, 'two projects wait for svc-mock');
      assert.ok((sample(text, 'barge_group_commit_rows_count') ?? 0) >= 1, 'group commits are observed');
      assert.ok(sample(text, 'barge_nodejs_eventloop_lag_seconds') !== undefined, 'event-loop lag');
      assert.ok((sample(text, 'barge_process_resident_memory_bytes') ?? 0) > 0, 'process memory');
    });

    test('a worker serves its own metrics on its port: provider calls and cargo moves', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const res = await h.app.request('POST', '/cargo/load', { key, body: mockBody('worker metrics') });
      assert.equal(res.status, 200, res.text);
      const { worker } = await h.worker({ latencyMs: 0 });
      clock.advance(1000);
      await worker.runUntilIdle();
      assert.ok(worker.url, 'the worker listens on BARGE_METRICS_PORT');
      const scrape = await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(scrape.status, 200);
      const text = await scrape.text();
      const labels = { provider: 'mock', model: 'svc-mock' };
      assert.ok((sample(text, 'barge_cargo_moves_total', { status: 'batched', ...labels }) ?? 0) >= 1);
      assert.ok((sample(text, 'barge_cargo_moves_total', { status: 'completed', ...labels }) ?? 0) >= 1);
      assert.ok((sample(text, 'barge_provider_call_seconds_count', { provider: 'mock', call: 'submit' }) ?? 0) >= 1);
      assert.equal(sample(text, 'barge_batches', { provider: 'mock', state: 'processing' }), undefined);
      const health = await fetch(`${worker.url}/health`);
      assert.equal(health.status, 200);
    });
  });
}

/** What README's metrics table promises a process running workers has from its start. */
const PROVIDER_CALLS = ['submit', 'find_submitted', 'status', 'results', 'cancel', 'cleanup', 'check'];
const LOOPS = ['batcher', 'batches', 'purger', 'deliveries', 'outbox'];
const CHANNELS = ['webhook', 'object_store', 'sqs', 'sns', 'eventbridge'];

for (const backend of await backends({ childProcesses: true })) {
  describe(`metrics of a freshly started barge serve on ${backend.name}`, () => {
    const s = serveHarness(backend);

    test('every counter and histogram with a known label set has its series at 0 before anything happens', async () => {
      const { url } = await s.serveAll({ BARGE_METRICS_TOKEN: TOKEN });
      const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      const text = await res.text();
      const missing: string[] = [];
      const expectZero = (name: string, labels: Record<string, string>) => {
        if (sample(text, name, labels) !== 0) missing.push(`${name}${JSON.stringify(labels)}`);
      };
      const expectPresent = (name: string, labels: Record<string, string>) => {
        if (sample(text, name, labels) === undefined) missing.push(`${name}${JSON.stringify(labels)}`);
      };
      for (const call of PROVIDER_CALLS) {
        expectZero('barge_provider_errors_total', { provider: 'mock', call });
        expectPresent('barge_provider_call_seconds_count', { provider: 'mock', call });
      }
      for (const loop of LOOPS) {
        expectZero('barge_loop_errors_total', { loop });
        expectPresent('barge_loop_step_seconds_count', { loop });
      }
      for (const channel of CHANNELS) {
        expectZero('barge_delivery_attempts_total', { channel, outcome: 'delivered', verdict: 'delivered' });
        expectZero('barge_delivery_attempt_seconds_count', { channel });
      }
      assert.deepEqual(missing, [], 'series missing (or not 0) right after start');
    });
  });
}
