/**
 * The typed client (`barge/client`) against a real `barge serve` child: every method, typed
 * errors, retries through a loopback proxy that fails, waitForResult with svc-mock, and
 * verifyWebhook on webhooks barge really delivered.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { Agent } from 'undici';
import { undiciTransport } from '../../src/cli/undici-transport.js';
import { Barge, BargeError, type Transport, verifyWebhook, WebhookVerificationError } from '../../src/client/index.js';
import { systemClock } from '../../src/domain/clock.js';
import { rotateWebhookSecret } from '../../src/operations/rotate-webhook-secret.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { startFlakyProxy } from '../helpers/flaky-proxy.js';
import { serveHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { freePort, waitFor } from '../helpers/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UNKNOWN_CARGO = `crg_${'0'.repeat(26)}`;
const prompt = (content: string) => ({
  params: { model: 'svc-mock', max_tokens: 50, messages: [{ role: 'user' as const, content }] },
});

for (const backend of await backends({ childProcesses: true })) {
  describe(`the typed client against barge serve on ${backend.name}`, () => {
    const suite = serveHarness(backend);
    let url = '';
    const client = async () => {
      if (url === '') url = (await suite.serveAll({ BARGE_MOCK_LATENCY_MS: '600' })).url;
      const { key } = await createProjectWithKey(suite.db.database);
      return { barge: new Barge({ baseUrl: url, apiKey: key }), key };
    };

    test('load, tracking, result, waitForResult, models and usage return the typed bodies', async () => {
      const { barge } = await client();
      const loaded = await barge.load({ ...prompt('Hello client'), metadata: { ticket: 'T-1' } });
      assert.match(loaded.cargo_id, /^crg_/);
      assert.equal(loaded.status, 'success');

      const tracking = await barge.tracking(loaded.cargo_id);
      assert.equal(tracking.cargo_id, loaded.cargo_id);
      assert.ok(['pending', 'batched', 'processing'].includes(tracking.status), tracking.status);

      // svc-mock answers 600 ms after submission: the first read is a typed 409.
      await assert.rejects(barge.result(loaded.cargo_id), (err: unknown) => {
        assert.ok(err instanceof BargeError);
        assert.equal(err.status, 409);
        assert.equal(err.code, 'result_not_ready');
        return true;
      });

      const result = await barge.waitForResult(loaded.cargo_id, { pollIntervalMs: 100, timeoutMs: 20_000 });
      assert.equal(result.cargo_id, loaded.cargo_id);
      assert.equal(result.success, true);
      assert.deepEqual(result.metadata, { ticket: 'T-1' });
      assert.equal((await barge.tracking(loaded.cargo_id)).status, 'completed');
      assert.deepEqual(await barge.result(loaded.cargo_id), result);

      const models = await barge.models();
      assert.ok(models.data.some((m) => m.id === 'svc-mock' && m.provider === 'mock'));

      const usage = await barge.usage();
      assert.equal(usage.totals.cargo, 1);
      assert.equal(usage.data[0]?.model, 'svc-mock');
      const today = new Date().toISOString().slice(0, 10);
      assert.equal((await barge.usage({ from: today, to: today })).totals.cargo, 1);
    });

    test('loadText and waitForResultText keep JSON text as it is: the metadata with its digits and key order', async () => {
      const { barge } = await client();
      const metadata = '{"z":1,"2":"two","id":12345678901234567890123}';
      const text = `{"params":${JSON.stringify(prompt('verbatim').params)},"metadata":${metadata}}`;
      const { cargo_id } = await barge.loadText(text);
      // waitForResult's JSON.parse rounds the number and moves "2" first; the answer's text keeps both.
      const result = await barge.waitForResultText(cargo_id, { pollIntervalMs: 100, timeoutMs: 20_000 });
      assert.ok(result.includes(`"metadata":${metadata}`), result);
      assert.deepEqual(JSON.parse(result), await barge.waitForResult(cargo_id));

      await assert.rejects(barge.loadText('{"params": '), (err: unknown) => {
        assert.ok(err instanceof BargeError);
        assert.equal(err.status, 400);
        assert.match(String(err.detail), /not valid JSON/);
        return true;
      });
    });

    test('refusals are BargeErrors with status, detail, code and the invalid fields', async () => {
      const { barge } = await client();
      const refused = async (call: Promise<unknown>) => {
        try {
          await call;
        } catch (err) {
          if (err instanceof BargeError) return err;
          throw err;
        }
        assert.fail('the call succeeded');
      };

      const invalid = await refused(
        barge.load({ params: { model: 'svc-mock', temperature: 3, messages: [{ role: 'user', content: 'x' }] } }),
      );
      assert.equal(invalid.status, 400);
      assert.equal(invalid.code, null);
      assert.match(String(invalid.detail), /temperature/);
      assert.deepEqual(invalid.errors, [{ path: '/params/temperature', message: 'must be <= 1' }]);

      const missing = await refused(barge.tracking(UNKNOWN_CARGO));
      assert.equal(missing.status, 404);
      assert.equal(missing.detail, 'Cargo not found');

      const badKey = await refused(new Barge({ baseUrl: url, apiKey: 'barge_sk_nope', maxRetries: 0 }).models());
      assert.equal(badKey.status, 401);
      assert.equal(typeof badKey.detail, 'string');

      const badQuery = await refused(barge.usage({ from: '2026-13-01' }));
      assert.equal(badQuery.status, 400);
      assert.ok(badQuery.errors.length > 0);

      const closed = `http://127.0.0.1:${await freePort()}`;
      const unreachable = await refused(new Barge({ baseUrl: closed, apiKey: 'k', maxRetries: 0 }).models());
      assert.equal(unreachable.status, 0);
      assert.match(unreachable.message, /did not answer/);
    });

    test('429, 5xx and dropped connections are retried with one Idempotency-Key for every try of a load', async () => {
      const { key } = await client();
      const proxy = await startFlakyProxy(url, [{ status: 503 }, 'drop']);
      try {
        const barge = new Barge({ baseUrl: proxy.url, apiKey: key });
        const loaded = await barge.load(prompt('retried'));
        assert.equal(proxy.seen.length, 3);
        const keys = proxy.seen.map((r) => r.headers['idempotency-key']);
        assert.ok(typeof keys[0] === 'string' && keys[0].length > 0);
        assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
        assert.equal((await barge.tracking(loaded.cargo_id)).cargo_id, loaded.cargo_id);

        // A given key is the one sent.
        proxy.seen.length = 0;
        await barge.load(prompt('keyed'), { idempotencyKey: 'my-key-1' });
        assert.equal(proxy.seen[0]?.headers['idempotency-key'], 'my-key-1');
      } finally {
        await proxy.close();
      }

      // maxRetries bounds the tries: the third failure goes to the caller.
      const failing = await startFlakyProxy(url, [{ status: 502 }, { status: 500 }, { status: 503 }]);
      try {
        await assert.rejects(new Barge({ baseUrl: failing.url, apiKey: key }).models(), (err: unknown) => {
          assert.ok(err instanceof BargeError);
          assert.equal(err.status, 503);
          return true;
        });
        assert.equal(failing.seen.length, 3);
      } finally {
        await failing.close();
      }

      // Retry-After is honoured; a 4xx other than 429 is not retried.
      const limited = await startFlakyProxy(url, [{ status: 429, headers: { 'retry-after': '1' } }, { status: 404 }]);
      try {
        const barge = new Barge({ baseUrl: limited.url, apiKey: key });
        const started = Date.now();
        await assert.rejects(barge.models(), (err: unknown) => err instanceof BargeError && err.status === 404);
        assert.ok(Date.now() - started >= 1000, 'retried before Retry-After');
        assert.equal(limited.seen.length, 2);
      } finally {
        await limited.close();
      }
    });

    test('a load retried after a lost answer makes one cargo', async () => {
      const { key } = await client();
      // The first try reaches barge but its answer is lost: the proxy forwards, then fails the reply.
      const proxy = await startFlakyProxy(url, [{ status: 504, forward: true }]);
      try {
        const barge = new Barge({ baseUrl: proxy.url, apiKey: key });
        const loaded = await barge.load(prompt('exactly once'));
        assert.equal(proxy.seen.length, 2);
        const all: string[] = [];
        for await (const cargo of barge.list()) all.push(cargo.cargo_id);
        assert.deepEqual(all, [loaded.cargo_id]);
      } finally {
        await proxy.close();
      }
    });

    test('waitForResult stops when its signal aborts or its timeout passes', async () => {
      const { barge } = await client();
      const { cargo_id } = await barge.load(prompt('svc-mock:fail'));
      await assert.rejects(
        barge.waitForResult(cargo_id, { pollIntervalMs: 50, timeoutMs: 100 }),
        (err: unknown) => err instanceof DOMException && err.name === 'TimeoutError',
      );
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('stopped by the caller')), 100);
      await assert.rejects(barge.waitForResult(cargo_id, { signal: controller.signal }), /stopped by the caller/);
      // A failed cargo is a result too: success false, with its error.
      const failed = await barge.waitForResult(cargo_id, { pollIntervalMs: 100, timeoutMs: 20_000 });
      assert.equal(failed.success, false);
      assert.ok(failed.error_message);
    });

    test('verifyWebhook accepts the webhooks barge delivers, under either secret during a rotation', async () => {
      const receiver = await startReceiver();
      try {
        await client();
        const { key, slug, webhookSecret } = await createProjectWithKey(suite.db.database);
        const barge = new Barge({ baseUrl: url, apiKey: key });
        const { cargo_id } = await barge.load({ ...prompt('signed'), callback_url: `${receiver.url}/hook` });
        await waitFor(
          'the webhook',
          () => receiver.received.length,
          (n) => n >= 1,
          { timeoutMs: 20_000 },
        );
        const delivered = receiver.received[0];
        assert.ok(delivered);
        const payload = verifyWebhook(webhookSecret, delivered.headers as Record<string, string>, delivered.body);
        assert.equal((payload as { cargo_id: string }).cargo_id, cargo_id);
        assert.deepEqual(
          verifyWebhook(
            webhookSecret,
            new Headers(delivered.headers as Record<string, string>),
            Buffer.from(delivered.body),
          ),
          payload,
        );

        assert.throws(
          () => verifyWebhook(webhookSecret, delivered.headers as Record<string, string>, `${delivered.body} `),
          WebhookVerificationError,
        );
        assert.throws(
          () =>
            verifyWebhook(
              `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
              delivered.headers as Record<string, string>,
              delivered.body,
            ),
          /no webhook-signature matches/,
        );

        // After a rotation barge signs with both secrets; each verifies.
        const rotated = await rotateWebhookSecret(
          { database: suite.db.database, clock: systemClock, config: { secretKey: null } },
          { slug },
        );
        assert.ok(rotated.ok);
        await barge.load({ ...prompt('signed twice'), callback_url: `${receiver.url}/hook` });
        await waitFor(
          'the second webhook',
          () => receiver.received.length,
          (n) => n >= 2,
          { timeoutMs: 20_000 },
        );
        const second = receiver.received[1];
        assert.ok(second);
        assert.equal(String(second.headers['webhook-signature']).split(' ').length, 2);
        verifyWebhook(webhookSecret, second.headers as Record<string, string>, second.body);
        verifyWebhook(rotated.value.webhookSecret, second.headers as Record<string, string>, second.body);

        // A signature made more than 5 minutes ago is refused even though it matches.
        const stale = new Date(Date.now() - 6 * 60_000);
        const signature = new Webhook(webhookSecret).sign('msg_1', stale, second.body);
        const staleHeaders = {
          'webhook-id': 'msg_1',
          'webhook-timestamp': String(Math.floor(stale.getTime() / 1000)),
          'webhook-signature': signature,
        };
        assert.throws(() => verifyWebhook(webhookSecret, staleHeaders, second.body), /within 5 minutes/);
      } finally {
        await receiver.close();
      }
    });
  });

  // An API process alone on its own database: no worker takes the cargo, so they stay pending.
  describe(`the typed client's list and cancel against barge serve --role api on ${backend.name}`, () => {
    const suite = serveHarness(backend);

    test('list goes over every page of 2,500 cargo, newest first; cancel is typed both ways', async () => {
      const api = (await suite.serve('api')).url as string;
      const { key } = await createProjectWithKey(suite.db.database);
      const barge = new Barge({ baseUrl: api, apiKey: key });
      const ids: string[] = [];
      for (let i = 0; i < 2500; i += 50) {
        const batch = await Promise.all(
          Array.from({ length: 50 }, (_, j) => barge.load({ ...prompt(`cargo ${i + j}`), metadata: { n: i + j } })),
        );
        ids.push(...batch.map((b) => b.cargo_id));
      }
      const listed: string[] = [];
      for await (const cargo of barge.list({ limit: 1000 })) listed.push(cargo.cargo_id);
      assert.equal(listed.length, 2500);
      assert.deepEqual(listed, [...ids].sort().reverse());
      let pages = 0;
      for await (const _ of barge.list({ status: 'pending', model: 'svc-mock' })) pages++;
      assert.equal(pages, 2500);

      const canceled = await barge.cancel(ids[0] as string);
      assert.equal(canceled.status, 'canceled');
      await assert.rejects(barge.cancel(ids[0] as string), (err: unknown) => {
        assert.ok(err instanceof BargeError);
        assert.equal(err.status, 409);
        assert.equal(err.code, 'cannot_cancel');
        return true;
      });
      const result = await barge.waitForResult(ids[0] as string);
      assert.equal(result.success, false);
      assert.equal(result.error_message, 'canceled');
      const onlyCanceled: string[] = [];
      for await (const cargo of barge.list({ status: 'canceled' })) onlyCanceled.push(cargo.cargo_id);
      assert.deepEqual(onlyCanceled, [ids[0]]);
    });
  });
}

/** Runs `check` with each transport (fetch, the CLI's undici) against a server that never answers. */
async function overEachTransport(
  check: (name: string, options: { baseUrl: string; apiKey: string; transport?: Transport }) => Promise<void>,
): Promise<void> {
  const server = createServer(() => {
    // never answers
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const agent = new Agent();
  try {
    for (const [name, transport] of [
      ['fetch', undefined],
      ['undici', undiciTransport(agent)],
    ] as const) {
      await check(name, { baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', ...(transport ? { transport } : {}) });
    }
  } finally {
    await agent.destroy();
    server.closeAllConnections();
    server.close();
  }
}

test('a try that gets no answer within timeoutMs fails as unanswered, over fetch and over the CLI transport', async () => {
  await overEachTransport(async (name, options) => {
    const barge = new Barge({ ...options, timeoutMs: 300, maxRetries: 0 });
    const started = performance.now();
    await assert.rejects(
      barge.load(prompt('x')),
      (err: unknown) => err instanceof BargeError && err.status === 0,
      name,
    );
    const took = performance.now() - started;
    assert.ok(took >= 290 && took < 2000, `${name}: gave up after ${took.toFixed(0)} ms`);
  });
});

test("a caller's abort ends a try in flight at once, over fetch and over the CLI transport", async () => {
  await overEachTransport(async (name, options) => {
    const barge = new Barge({ ...options, timeoutMs: 30_000 });
    const controller = new AbortController();
    const stop = new Error('stopped by the caller');
    setTimeout(() => controller.abort(stop), 200);
    const started = performance.now();
    await assert.rejects(barge.result('c_x', { signal: controller.signal }), (err: unknown) => err === stop, name);
    const took = performance.now() - started;
    assert.ok(took >= 190 && took < 2000, `${name}: stopped after ${took.toFixed(0)} ms`);
    // Aborted before it is sent: no try at all.
    await assert.rejects(barge.result('c_x', { signal: controller.signal }), (err: unknown) => err === stop, name);
  });
});

test('the client loads nothing at run time but its own modules (and node:crypto, for verifyWebhook only)', () => {
  const dir = join(ROOT, 'dist/src/client');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const source = readFileSync(join(dir, file), 'utf8');
    const imports = [...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*from\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    for (const specifier of imports) {
      const allowed =
        /^\.\/[\w-]+\.js$/.test(specifier ?? '') || (file === 'verify-webhook.js' && specifier === 'node:crypto');
      assert.ok(allowed, `${file} imports ${specifier}`);
    }
    if (file === 'browser.js') assert.ok(!imports.includes('./verify-webhook.js'));
  }
});

test('package.json exports barge/client, with types, and a browser build without node:crypto', async () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
  };
  const entry = pkg.exports['./client'];
  assert.ok(entry);
  for (const path of [entry.types, entry.browser, entry.default]) {
    assert.ok(
      path && readdirSync(join(ROOT, path, '..')).includes(path.split('/').pop() ?? ''),
      `${path} is not built`,
    );
  }
  // Resolved as a user's code resolves it: by the package's name.
  const specifier = ['barge', 'client'].join('/');
  const loaded = (await import(specifier)) as typeof import('../../src/client/index.js');
  assert.equal(typeof loaded.Barge, 'function');
  assert.equal(typeof loaded.verifyWebhook, 'function');
});
