/**
 * Error answers are JSON with a detail on every backend: malformed requests on raw sockets, bad paths and headers,
 * content codings (gzip bombs included), refused JSON keys and wrong methods
 * (request timeouts: hostile-bodies.test.ts).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import { createProjectWithKey, mockBody, startTestApp, storedCargo, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

/** What came back, from fetch or parsed off a raw socket. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

interface Context {
  app: TestApp;
  host: string;
  port: number;
  key: string;
}

interface Case {
  name: string;
  send: (ctx: Context) => Promise<Answer>;
  status: number;
  detail?: RegExp;
  allow?: string;
}

const TRACKING = '/cargo/crg_01jd5q3k8m9x2v4w6y8z0a1b2c/tracking';
/** Metadata whose key order and number literals JSON.stringify would not keep, to see it is stored as sent. */
const METADATA_TEXT = '{"z":"T-1","n":1.50,"list":[1e2,"x"],"a":-0}';
const bodyWithMetadata = (metadata: string) => JSON.stringify(mockBody('hi')).replace(/}$/, `,"metadata":${metadata}}`);

async function viaFetch(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

/** The HTTP/1.1 responses in `raw`, each delimited by its Content-Length. */
function parseResponses(raw: Buffer): Answer[] {
  const answers: Answer[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    assert.ok(end >= 0, `no complete HTTP response: ${JSON.stringify(rest.toString('latin1').slice(0, 200))}`);
    const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
    assert.ok(match, `bad status line: ${statusLine}`);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    assert.ok(Number.isInteger(length), `a Content-Length: ${statusLine} ${JSON.stringify(headers)}`);
    const body = rest.subarray(end + 4, end + 4 + length);
    assert.equal(body.length, length, 'the whole body arrived');
    answers.push({ status: Number(match[1]), headers, text: body.toString('utf8') });
    rest = rest.subarray(end + 4 + length);
  }
  return answers;
}

/** Sends bytes as they are on a fresh connection and returns every response until it closes. */
function allViaSocket(ctx: Context, data: string | Buffer): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(ctx.port, ctx.host);
    const timer = setTimeout(() => socket.destroy(new Error('connection not closed within 10 s')), 10_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server half-closes after answering; close our side too.
    socket.on('end', () => socket.end());
    socket.on('error', (err) => {
      // A reset after the answer arrived is fine; without one it is the failure.
      if (chunks.length === 0) reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponses(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    socket.write(data);
  });
}

/** The one response to bytes sent as they are. */
async function viaSocket(ctx: Context, data: string | Buffer): Promise<Answer> {
  const answers = await allViaSocket(ctx, data);
  assert.equal(answers.length, 1, JSON.stringify(answers));
  return answers[0] as Answer;
}

/** A request as bytes; `Connection: close` unless `keepAlive`, so the exchange ends with the answer. */
const request = (method: string, target: string, headers: string[] = [], body = '', keepAlive = false) =>
  [
    `${method} ${target} HTTP/1.1`,
    'Host: localhost',
    ...(keepAlive ? [] : ['Connection: close']),
    ...headers,
    '',
    body,
  ].join('\r\n');

/** A POST /cargo/load with a JSON type sent as bytes, with the case's other headers (framing, key) and body. */
const loadViaSocket = (ctx: Context, headers: string[], body = '') =>
  viaSocket(ctx, request('POST', '/cargo/load', ['Content-Type: application/json', ...headers], body));

/** A POST /cargo/load with the suite's key and a JSON type, plus whatever else the case needs. */
const load = (ctx: Context, body: RequestInit['body'], headers: Record<string, string> = {}) =>
  viaFetch(`${ctx.app.url}/cargo/load`, {
    method: 'POST',
    headers: { 'x-api-key': ctx.key, 'content-type': 'application/json', ...headers },
    body,
  });

const CASES: Case[] = [
  {
    name: 'a 300-character cargo id',
    send: (ctx) => viaFetch(`${ctx.app.url}/cargo/${'c'.repeat(300)}/tracking`),
    status: 414,
    detail: /longer than the limit of 100 characters/,
  },
  {
    name: 'bad percent-encoding in the path',
    send: (ctx) => viaSocket(ctx, request('GET', '/cargo/%E0%A4%A/tracking')),
    status: 400,
    detail: /percent-encoding/,
  },
  {
    name: 'an oversize URL (100 KB path)',
    send: (ctx) => viaSocket(ctx, request('GET', `/cargo/${'u'.repeat(100_000)}/tracking`)),
    status: 431,
    detail: /request line and headers are larger/,
  },
  {
    name: 'an oversize header (20 KB)',
    send: (ctx) => viaSocket(ctx, request('GET', TRACKING, [`X-Big: ${'h'.repeat(20_000)}`])),
    status: 431,
  },
  {
    name: 'too many headers (3,000)',
    send: (ctx) =>
      viaSocket(
        ctx,
        request(
          'GET',
          TRACKING,
          Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`),
        ),
      ),
    status: 431,
  },
  {
    name: 'a garbage request line',
    send: (ctx) => viaSocket(ctx, '\x00\x01 this is not HTTP\r\n\r\n'),
    status: 400,
    detail: /^Malformed HTTP request: /,
  },
  {
    name: 'an invalid header name',
    send: (ctx) => viaSocket(ctx, request('GET', TRACKING, ['Bad Header: v'])),
    status: 400,
    detail: /header token/i,
  },
  {
    name: 'Content-Length: abc',
    send: (ctx) => loadViaSocket(ctx, ['Content-Length: abc']),
    status: 400,
    detail: /Content-Length/,
  },
  {
    name: 'Content-Length together with Transfer-Encoding: chunked',
    send: (ctx) => loadViaSocket(ctx, ['Content-Length: 5', 'Transfer-Encoding: chunked'], '0\r\n\r\n'),
    status: 400,
    detail: /Transfer-Encoding/,
  },
  {
    name: 'two conflicting Content-Length headers',
    send: (ctx) => loadViaSocket(ctx, ['Content-Length: 2', 'Content-Length: 3'], '{}'),
    status: 400,
    detail: /Content-Length/,
  },
  {
    name: 'oversize chunk extensions',
    send: (ctx) =>
      loadViaSocket(
        ctx,
        [`X-API-Key: ${ctx.key}`, 'Transfer-Encoding: chunked'],
        `2;${'e'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`,
      ),
    status: 413,
  },
  {
    name: 'Content-Encoding: gzip on a body that is not gzip',
    send: (ctx) => load(ctx, JSON.stringify(mockBody('hi')), { 'content-encoding': 'gzip' }),
    status: 400,
    detail: /not valid gzip/,
  },
  {
    name: 'Content-Encoding: deflate on a body that is not deflate',
    send: (ctx) => load(ctx, gzipSync(JSON.stringify(mockBody('hi'))), { 'content-encoding': 'deflate' }),
    status: 400,
    detail: /not valid deflate/,
  },
  {
    name: 'Content-Encoding: br (not decoded)',
    send: (ctx) => load(ctx, JSON.stringify(mockBody('hi')), { 'content-encoding': 'br' }),
    status: 415,
    detail: /'br'/,
  },
  {
    name: 'Content-Encoding: compress',
    send: (ctx) => load(ctx, JSON.stringify(mockBody('hi')), { 'content-encoding': 'compress' }),
    status: 415,
    detail: /'compress'/,
  },
  {
    name: 'two content codings (gzip, gzip)',
    send: (ctx) => load(ctx, gzipSync(gzipSync(JSON.stringify(mockBody('hi')))), { 'content-encoding': 'gzip, gzip' }),
    status: 415,
    detail: /'gzip, gzip'/,
  },
  {
    name: 'a gzip bomb (50 MB of spaces, gzipped)',
    send: (ctx) => load(ctx, gzipSync(Buffer.alloc(50 * 1024 * 1024, ' ')), { 'content-encoding': 'gzip' }),
    status: 413,
    detail: /larger than the limit/,
  },
  {
    name: 'a truncated gzip body',
    send: (ctx) => load(ctx, gzipSync(JSON.stringify(mockBody('hi'))).subarray(0, 20), { 'content-encoding': 'gzip' }),
    status: 400,
    detail: /not valid gzip/,
  },
  {
    name: '"__proto__" in metadata',
    send: (ctx) => load(ctx, bodyWithMetadata('{"__proto__":{"polluted":true}}')),
    status: 400,
    detail: /"__proto__" key \(found in \/metadata; refused to protect against prototype pollution\)/,
  },
  {
    name: '"constructor.prototype" in metadata',
    send: (ctx) => load(ctx, bodyWithMetadata('{"constructor":{"prototype":{"polluted":true}}}')),
    status: 400,
    detail: /"constructor" key holding a "prototype" key \(found in \/metadata;/,
  },
  {
    name: 'JSON that does not parse says why',
    send: (ctx) => load(ctx, '{"params":'),
    status: 400,
    detail: /^Request body is not valid JSON: .*JSON/,
  },
  {
    name: 'DELETE on a GET route, with a JSON content type',
    send: (ctx) =>
      viaFetch(`${ctx.app.url}${TRACKING}`, {
        method: 'DELETE',
        headers: { 'content-type': 'application/json', 'x-api-key': ctx.key },
      }),
    status: 405,
    allow: 'GET, HEAD',
  },
  {
    name: 'OPTIONS on a POST route, with a JSON content type and a bad body',
    send: (ctx) =>
      viaFetch(`${ctx.app.url}/cargo/load`, {
        method: 'OPTIONS',
        headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
        body: '{',
      }),
    status: 405,
    allow: 'POST',
  },
  {
    name: 'POST on an unknown path, with a JSON content type',
    send: (ctx) =>
      viaFetch(`${ctx.app.url}/cargo/unload/now`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '',
      }),
    status: 404,
  },
  {
    name: 'path traversal under /docs/static',
    send: (ctx) => viaSocket(ctx, request('GET', '/docs/static/..%2f..%2fpackage.json')),
    status: 404,
  },
  {
    name: 'a missing file under /docs/static',
    send: (ctx) => viaFetch(`${ctx.app.url}/docs/static/no-such-file.js`),
    status: 404,
  },
];

for (const backend of await backends()) {
  describe(`error answers are JSON with a detail on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let ctx: Context;
    before(async () => {
      db = await backend.create();
      app = await startTestApp(db.database);
      const { key } = await createProjectWithKey(db.database);
      const { hostname, port } = new URL(app.url);
      ctx = { app, host: hostname, port: Number(port), key };
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    for (const c of CASES) {
      test(`${c.name} → ${c.status}`, async () => {
        const res = await c.send(ctx);
        assert.ok(res.status < 500, `never a 5xx: ${res.status} ${res.text}`);
        assert.equal(res.status, c.status, res.text);
        assert.match(res.headers['content-type'] ?? '', /^application\/json/, JSON.stringify(res.headers));
        const body = JSON.parse(res.text);
        assert.equal(typeof body.detail, 'string', res.text);
        assert.ok(body.detail.length > 0);
        if (c.detail) assert.match(body.detail, c.detail);
        if (c.allow) assert.equal(res.headers.allow, c.allow);
      });
    }

    test('the server still answers after all of that', async () => {
      assert.equal((await app.request('GET', '/health')).status, 200);
    });

    for (const [coding, encode] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
    ] as const) {
      test(`a valid ${coding} body is accepted and its metadata stored exactly as sent`, async () => {
        const text = bodyWithMetadata(METADATA_TEXT);
        const res = await load(ctx, encode(text), { 'content-encoding': coding });
        assert.equal(res.status, 200, res.text);
        const { cargo_id } = JSON.parse(res.text);
        assert.match(cargo_id, /^crg_/);
        const row = await storedCargo(db.database, cargo_id);
        assert.equal(row.metadata, METADATA_TEXT);
      });
    }

    test('a chunked gzip body works, and an identity coding is no coding', async () => {
      const gz = gzipSync(bodyWithMetadata('{"via":"chunks"}'));
      const streamed = await fetch(`${app.url}/cargo/load`, {
        method: 'POST',
        headers: { 'x-api-key': ctx.key, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(gz.subarray(0, 10));
            controller.enqueue(gz.subarray(10));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      assert.equal(streamed.status, 200, await streamed.text());
      const identity = await load(ctx, JSON.stringify(mockBody('hi')), { 'content-encoding': 'identity' });
      assert.equal(identity.status, 200, identity.text);
    });

    test('the decoded size is held to the body limit; the sent size too', async () => {
      const small = await startTestApp(db.database, { config: { bodyLimitBytes: 2048 } });
      try {
        const smallCtx = { ...ctx, app: small };
        const fits = JSON.stringify(mockBody('x'.repeat(1900)));
        assert.equal((await load(smallCtx, gzipSync(fits), { 'content-encoding': 'gzip' })).status, 200);
        const big = JSON.stringify(mockBody('x'.repeat(3000)));
        const res = await load(smallCtx, gzipSync(big), { 'content-encoding': 'gzip' });
        assert.equal(res.status, 413, res.text);
        assert.match(JSON.parse(res.text).detail, /2048/);
        // Empty gzip members decode to nothing: many of them are still too much to send.
        const empties = Buffer.concat(Array.from({ length: 200 }, () => gzipSync('')));
        const padded = Buffer.concat([empties, gzipSync(fits)]);
        assert.ok(padded.length > 2048);
        const sent = await load(smallCtx, padded, { 'content-encoding': 'gzip' });
        assert.equal(sent.status, 413, sent.text);
      } finally {
        await small.close();
      }
    });

    test('a client error after a good keep-alive request: both answered, then the connection closes', async () => {
      const answers = await allViaSocket(
        ctx,
        `${request('GET', '/health', [], '', true)}${request('GET', '/health', ['Bad Header: v'])}`,
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 400],
      );
      const [, refused] = answers as [Answer, Answer];
      assert.equal(refused.headers.connection, 'close');
      assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8');
      assert.match(JSON.parse(refused.text).detail, /^Malformed HTTP request: Invalid header token/);
    });
  });
}
