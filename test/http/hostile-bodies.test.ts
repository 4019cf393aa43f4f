/** Hostile requests: bodies that make validation costly, parts past their bounds, slow clients, bursts of big ones. */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MAX_REPORTED_ERRORS } from '../../src/domain/errors.js';
import { createProjectWithKey, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

/**
 * Bodies built to make validation expensive: many invalid items must cost time linear in the body
 * and an answer of bounded size (the first few dozen problems and a count). Before, 100,000 wrong
 * messages (200 KB) took 51 s to answer and held the event loop all that time; the time bounds
 * here are generous guards against that, not measurements (bench/ measures).
 */
for (const backend of await backends()) {
  describe(`hostile request bodies on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let key: string;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, { config: { bodyLimitBytes: 11 * 1024 * 1024 } });
      key = (await createProjectWithKey(db.database)).key;
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    const invalidMessages = (n: number) =>
      `{"params":{"model":"svc-mock","messages":[${Array(n).fill('1').join(',')}]}}`;

    test('100,000 invalid items: the first problems and how many more, answered at once', async () => {
      const started = Date.now();
      const res = await app.request('POST', '/cargo/load', {
        key,
        rawBody: invalidMessages(100_000),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400, res.text.slice(0, 300));
      assert.equal(res.body.errors.length, MAX_REPORTED_ERRORS);
      // Too many messages, and each of them wrong: 100,001 problems.
      assert.match(res.body.detail, /^Invalid request body: \/params\/messages .* \(and 100000 more\)\.$/);
      assert.ok(res.text.length < 10_000, `the answer is ${res.text.length} bytes`);
      assert.ok(Date.now() - started < 10_000, `it took ${Date.now() - started} ms`);
    });

    test('a 10 MiB body of invalid items reports its first problem and leaves the service answering', async () => {
      const body = invalidMessages(5_300_000);
      assert.ok(body.length > 10 * 1024 * 1024 - 100);
      const health = (async () => {
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const t = Date.now();
          assert.equal((await app.request('GET', '/health')).status, 200);
          times.push(Date.now() - t);
        }
        return times;
      })();
      const started = Date.now();
      const res = await app.request('POST', '/cargo/load', {
        key,
        rawBody: body,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors.length, 1);
      assert.equal(res.body.errors[0].path, '/params/messages');
      assert.ok(Date.now() - started < 10_000, `it took ${Date.now() - started} ms`);
      assert.equal((await health).length, 5);
    });
  });
}

for (const backend of (await backends()).filter((b) => b.name === 'sqlite-memory')) {
  describe(`bounds on request parts and slow clients on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let key: string;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, { config: { requestTimeoutMs: 1000, maxConnections: 20 } });
      key = (await createProjectWithKey(db.database)).key;
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    const params = (extra: Record<string, unknown>) => ({
      params: { model: 'svc-mock', messages: [{ role: 'user', content: 'hi' }], ...extra },
    });

    test('parts past their bounds are a 400 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [params({ stop_sequences: Array.from({ length: 17 }, (_, i) => `s${i}`) }), '/params/stop_sequences'],
        [params({ stop_sequences: ['x'.repeat(257)] }), '/params/stop_sequences/0'],
        [params({ max_tokens: 1e308 }), '/params/max_tokens'],
        [params({ top_k: 2_000_001 }), '/params/top_k'],
        [
          {
            params: {
              model: 'svc-mock',
              messages: Array.from({ length: 10_001 }, () => ({ role: 'user', content: 'x' })),
            },
          },
          '/params/messages',
        ],
      ];
      for (const [body, path] of cases) {
        const res = await app.request('POST', '/cargo/load', { key, body });
        assert.equal(res.status, 400, `${path}: ${res.text.slice(0, 200)}`);
        assert.ok(
          res.body.errors.some((e: { path: string }) => e.path === path),
          `${path}: ${JSON.stringify(res.body.errors)}`,
        );
      }
    });

    /** A raw connection that sends `head`, then one byte of body; resolves with what came back and when it closed. */
    async function trickle(head: string): Promise<{ answer: string; closedAfterMs: number }> {
      const { port } = new URL(app.url);
      const socket = connect(Number(port), '127.0.0.1');
      const started = Date.now();
      let answer = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        answer += chunk;
      });
      socket.write(`${head}{`);
      const timer = setInterval(() => socket.writable && socket.write(' '), 200);
      await new Promise<void>((resolve) => socket.on('close', () => resolve()));
      clearInterval(timer);
      return { answer, closedAfterMs: Date.now() - started };
    }

    test('an answer given before the body was read closes the connection', async () => {
      const { answer, closedAfterMs } = await trickle(
        'POST /cargo/load HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
      );
      assert.match(answer, /^HTTP\/1\.1 401 /);
      assert.match(answer, /connection: close/i);
      assert.ok(closedAfterMs < 2000, `the connection stayed open ${closedAfterMs} ms`);
    });

    /**
     * A raw connection that sends `parts` (each once the answer to the one before has come, when
     * there is more than one) and then nothing; resolves with what came back and when it closed.
     */
    async function stall(...parts: string[]): Promise<{ answer: string; closedAfterMs: number }> {
      const { port } = new URL(app.url);
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      let started = Date.now();
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        answer += chunk;
        const next = parts.shift();
        if (next !== undefined) {
          started = Date.now();
          socket.write(next);
        }
      });
      socket.write(parts.shift() ?? '');
      // Well past the deadline: a connection still open then fails the test instead of hanging it.
      const timer = setTimeout(() => socket.destroy(), 6000);
      await new Promise<void>((resolve) => socket.on('close', () => resolve()));
      clearTimeout(timer);
      return { answer, closedAfterMs: Date.now() - started };
    }

    /** A JSON 408 with a detail came back, a little after the 1 s deadline, and the connection closed. */
    const assertTimedOut = ({ answer, closedAfterMs }: { answer: string; closedAfterMs: number }) => {
      assert.match(answer, /HTTP\/1\.1 408 /);
      assert.match(answer, /content-type: application\/json/i);
      assert.match(answer, /\{"detail":"The request was not received in time\."\}$/);
      assert.ok(closedAfterMs >= 900 && closedAfterMs < 3000, `closed after ${closedAfterMs} ms`);
    };

    test('a request whose headers stop arriving gets a 408 at the request timeout', async () => {
      assertTimedOut(await stall(`POST /cargo/load HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n`));
    });

    test('a request whose body stops arriving gets a 408 at the request timeout', async () => {
      assertTimedOut(
        await stall(
          `POST /cargo/load HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"params":`,
        ),
      );
    });

    test('a second request on a kept-alive connection that stops arriving gets a 408', async () => {
      const { answer, closedAfterMs } = await stall(
        'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET /health HTTP/1.1\r\n',
      );
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assertTimedOut({ answer, closedAfterMs });
    });

    test('an idle kept-alive connection is closed a second after the request timeout its Keep-Alive header gives', async () => {
      const { answer, closedAfterMs } = await stall('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assert.match(answer, /keep-alive: timeout=1\r\n/i);
      assert.doesNotMatch(answer, /408/);
      assert.ok(closedAfterMs >= 1900 && closedAfterMs < 3000, `closed after ${closedAfterMs} ms`);
    });

    test('a body trickled slower than the request timeout is cut off with a 408', async () => {
      const { answer, closedAfterMs } = await trickle(
        `POST /cargo/load HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 408 /);
      assert.match(answer, /"detail"/);
      assert.ok(closedAfterMs < 5000, `the connection stayed open ${closedAfterMs} ms`);
    });
  });
}

for (const backend of (await backends()).filter((b) => b.name !== 'sqlite-memory')) {
  describe(`a burst of large bodies on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let key: string;
    before(async () => {
      db = await backend.create();
      // Room for about three 4 MB bodies at once.
      app = await startTestApp(db.database, { config: { inFlightBodyBytes: 12 * 1024 * 1024 } });
      key = (await createProjectWithKey(db.database)).key;
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    test('bodies past the in-flight budget get 503 with Retry-After; the rest are stored; the process lives', async () => {
      const body = JSON.stringify({
        params: { model: 'svc-mock', system: 'x'.repeat(4 * 1024 * 1024), messages: [{ role: 'user', content: 'hi' }] },
      });
      const answers = await Promise.all(
        Array.from({ length: 24 }, () =>
          fetch(`${app.url}/cargo/load`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body,
          }).then(async (res) => ({
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            text: await res.text(),
          })),
        ),
      );
      const busy = answers.filter((a) => a.status === 503);
      const stored = answers.filter((a) => a.status === 200);
      assert.equal(busy.length + stored.length, answers.length, JSON.stringify(answers.map((a) => a.status)));
      assert.ok(stored.length >= 1, 'some are stored');
      assert.ok(busy.length >= 1, 'some are turned away rather than held');
      for (const a of busy) {
        assert.equal(a.retryAfter, '1');
        assert.match(JSON.parse(a.text).detail, /retry shortly/);
      }
      // And the service answers normally afterwards: the budget was given back.
      const after = await app.request('POST', '/cargo/load', {
        key,
        body: { params: { model: 'svc-mock', messages: [{ role: 'user', content: 'hi' }] } },
      });
      assert.equal(after.status, 200, after.text);
    });
  });
}

for (const backend of (await backends()).filter((b) => b.name === 'sqlite-memory')) {
  describe(`the in-flight body budget on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let key: string;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database, { config: { inFlightBodyBytes: 4096 } });
      key = (await createProjectWithKey(db.database)).key;
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    const bodyOf = (systemLength: number) =>
      JSON.stringify({
        params: { model: 'svc-mock', system: 'x'.repeat(systemLength), messages: [{ role: 'user', content: 'hi' }] },
      });
    const load = (body: string) =>
      app.request('POST', '/cargo/load', { key, rawBody: body, headers: { 'content-type': 'application/json' } });

    test('a lone body larger than the budget is taken: the body limit alone bounds its size', async () => {
      const res = await load(bodyOf(20_000));
      assert.equal(res.status, 200, res.text);
    });

    test('a body that does not fit beside one being read gets 503 with Retry-After; once that is answered, it fits', async () => {
      const held = bodyOf(20_000);
      const { port } = new URL(app.url);
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        answer += chunk;
      });
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(
        `POST /cargo/load HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${held.length}\r\n\r\n${held.slice(0, 100)}`,
      );
      // The held body reserves its length once its request is authenticated: wait for the refusal.
      let busy: Awaited<ReturnType<typeof load>> | undefined;
      for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
        const res = await load(bodyOf(10));
        if (res.status === 503) {
          busy = res;
          break;
        }
        assert.equal(res.status, 200, res.text);
      }
      assert.ok(busy, 'a second body was refused while the first was held');
      assert.equal(busy.headers.get('retry-after'), '1');
      assert.match(busy.body.detail, /retry shortly/);

      socket.write(held.slice(100));
      await closed;
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assert.equal((await load(bodyOf(10))).status, 200);
    });
  });
}
