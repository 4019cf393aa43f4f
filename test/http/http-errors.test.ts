/** The HTTP edges on every backend: 404, 405, 400, 415, 413, the rate limit, health, docs, OpenAPI, fuzzed bodies. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { createApiKey } from '../../src/store/admin/api-keys.js';
import { openDatabase } from '../../src/store/database.js';
import { createProjectWithKey, mockBody, startTestApp } from '../helpers/app.js';
import { assertDetail } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const UNKNOWN_CARGO = 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c';
const message = '{"role":"user","content":"hi"}';
const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** Odd bodies: none of them may produce a 5xx. */
const FUZZ_BODIES: string[] = [
  '[]',
  '[1,2,3]',
  '0',
  '-1',
  '1e999',
  '"a string"',
  'null',
  'true',
  '{}',
  '{"params":null}',
  '{"params":[]}',
  '{"params":"svc-mock"}',
  '{"params":{"model":null,"messages":null}}',
  '{"params":{"model":["svc-mock"]}}',
  `{"params":{"model":"svc-mock","messages":[null]}}`,
  `{"params":{"model":"svc-mock","messages":[[]]}}`,
  `{"params":{"model":"svc-mock","messages":[{"role":"user","content":{"type":"text","text":"x"}}]}}`,
  `{"params":{"model":"svc-mock","messages":[{"role":"user","content":[null,1,"x"]}]}}`,
  `{"params":{"model":"svc-mock","max_tokens":1e400,"messages":[${message}]}}`,
  `{"params":{"model":"svc-mock","max_tokens":-0,"messages":[${message}]}}`,
  `{"params":{"model":"svc-mock","max_tokens":123456789012345678901234567890,"messages":[${message}]}}`,
  `{"params":{"model":"svc-mock","temperature":-1e-400,"top_p":1e-400,"messages":[${message}]}}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"result_ttl_seconds":1e400}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"metadata":{"d":${deep(5000)}}}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"metadata":{"d":${deep(200_000)}}}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"extra":${deep(200_000)}}`,
  `{"params":{"model":"svc-mock","messages":[{"role":"user","content":${deep(100_000)}}]}}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"metadata":{"__proto__":{"polluted":true}}}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"metadata":{"constructor":{"prototype":{"polluted":true}}}}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"metadata":{"constructor":"c","toString":"t","hasOwnProperty":1,"valueOf":null}}`,
  `{"params":{"model":"svc-mock","messages":[${message}],"__proto__":{"max_tokens":5}}}`,
  `{"params":{"model":"svc-mock","messages":[${message}],"constructor":{"prototype":{}}}}`,
  `{"__proto__":{"params":{}},"params":{"model":"svc-mock","messages":[${message}]}}`,
  `{"params":{"model":"__proto__","messages":[${message}]}}`,
  `{"params":{"model":"constructor","messages":[${message}]}}`,
  `{"params":{"model":"toString","messages":[${message}]}}`,
  `{"params":{"model":"svc-mock"},"records":[{"recordId":"__proto__","modelInput":{"messages":[${message}]}},{"recordId":"constructor","modelInput":{"messages":[${message}]}}]}`,
  `{"params":{"model":"svc-mock"},"records":{"length":2}}`,
  `{"params":{"model":"svc-mock"},"records":[null]}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"callback_url":"http://[::1"}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"callback_url":"javascript:alert(1)"}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"callback_url":"https://a.example/\\u0000x"}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"callback_url":"https://a.example/\\nx"}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"callback_url":"https://${'a'.repeat(3000)}.example/"}`,
  `{"params":{"model":"svc-mock","messages":[${message}]},"callback":{"type":"object_store","connection_id":"\\u0000","bucket_arn":"\\ud800"}}`,
  `{"params":{"model":"svc-mock","messages":[{"role":"user","content":"\\u0000 \\ud800 \\udfff"}]},"metadata":{"\\u0000":"\\u0000","\\ud800":"x"}}`,
  `{"params":{"model":"${'m'.repeat(5000)}","messages":[${message}]}}`,
  `{"params":{"model":"svc-mock","stop_sequences":[${'"s",'.repeat(1000)}"s"],"messages":[${message}]}}`,
  `\ufeff{"params":{"model":"svc-mock","messages":[${message}]},"metadata":{"bom":true}}`,
  '{"params":{"model":"svc-mock","messages":[',
  '{"a":1}}',
  '{"a":"\\x"}',
  "{'params':{}}",
];

for (const backend of await backends({ childProcesses: true })) {
  describe(`HTTP edges on ${backend.name}`, () => {
    const h = harness(backend);

    test('an unknown route is 404 JSON with a detail', async () => {
      for (const [method, path] of [
        ['GET', '/nope'],
        ['POST', '/cargo/load/extra'],
        ['GET', `/cargo/${UNKNOWN_CARGO}`],
        ['GET', `/cargo/${UNKNOWN_CARGO}/tracking/extra`],
        ['DELETE', '/v1/anything?x=1'],
      ] as const) {
        const res = await h.app.request(method, path);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(Object.keys(res.body), ['detail']);
        assert.equal(typeof res.body.detail, 'string');
      }
    });

    test('a wrong method is 405 with an Allow header', async () => {
      const load = await h.app.request('DELETE', '/cargo/load');
      assert.equal(load.status, 405, load.text);
      assert.equal(load.headers.get('allow'), 'POST');
      assert.equal(typeof load.body.detail, 'string');
      assert.equal((await h.app.request('GET', '/cargo/load')).headers.get('allow'), 'POST');

      const tracking = await h.app.request('POST', `/cargo/${UNKNOWN_CARGO}/tracking`, { body: {} });
      assert.equal(tracking.status, 405);
      assert.deepEqual(tracking.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD']);
      const result = await h.app.request('PUT', `/cargo/${UNKNOWN_CARGO}/result`);
      assert.equal(result.status, 405);
      assert.match(result.headers.get('allow') ?? '', /GET/);
      assert.equal((await h.app.request('POST', '/health')).status, 405);
    });

    test('malformed JSON and an empty JSON body are 400 with a detail', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      for (const rawBody of ['{"params":', '{params: {}}', 'nul', '']) {
        const res = await h.app.request('POST', '/cargo/load', { key, rawBody, headers: JSON_TYPE });
        assert.equal(res.status, 400, `${JSON.stringify(rawBody)}: ${res.text}`);
        assert.equal(typeof res.body.detail, 'string');
        assert.ok(res.body.detail.length > 0);
      }
    });

    test('a body that is not JSON is 415; a JSON type with charset is fine', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const plain = await h.app.request('POST', '/cargo/load', {
        key,
        rawBody: JSON.stringify(mockBody('hi')),
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(plain.status, 415, plain.text);
      assert.deepEqual(Object.keys(plain.body), ['detail']);
      assert.match(plain.body.detail, /text\/plain/);
      for (const type of ['application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
        const res = await h.app.request('POST', '/cargo/load', {
          key,
          rawBody: 'a=1',
          headers: { 'content-type': type },
        });
        assert.equal(res.status, 415, `${type}: ${res.text}`);
      }
      const untyped = await fetch(`${h.app.url}/cargo/load`, {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: new TextEncoder().encode(JSON.stringify(mockBody('hi'))),
      });
      assert.equal(untyped.status, 415);
      assert.match(((await untyped.json()) as { detail: string }).detail, /Content-Type/);

      const charset = await h.app.request('POST', '/cargo/load', {
        key,
        rawBody: JSON.stringify(mockBody('hi')),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      assert.equal(charset.status, 200, charset.text);
    });

    test('a body over the limit is 413, after authentication', async () => {
      const small = await startTestApp(h.db.database, { config: { bodyLimitBytes: 2048 } });
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const fits = JSON.stringify(mockBody('x'.repeat(1900)));
        assert.ok(Buffer.byteLength(fits) <= 2048);
        assert.equal(
          (await small.request('POST', '/cargo/load', { key, rawBody: fits, headers: JSON_TYPE })).status,
          200,
        );

        const big = JSON.stringify(mockBody('x'.repeat(3000)));
        const res = await small.request('POST', '/cargo/load', { key, rawBody: big, headers: JSON_TYPE });
        assert.equal(res.status, 413, res.text);
        assert.deepEqual(Object.keys(res.body), ['detail']);
        assert.match(res.body.detail, /2048/);

        // Without a Content-Length (chunked), the limit still holds.
        const streamed = await fetch(`${small.url}/cargo/load`, {
          method: 'POST',
          headers: { 'x-api-key': key, ...JSON_TYPE },
          body: new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode(big));
              controller.close();
            },
          }),
          duplex: 'half',
        } as RequestInit);
        assert.equal(streamed.status, 413);

        assertDetail(
          await small.request('POST', '/cargo/load', {
            key: `barge_sk_${'B'.repeat(32)}`,
            rawBody: big,
            headers: JSON_TYPE,
          }),
          401,
          'Invalid API key.',
        );
      } finally {
        await small.close();
      }
    });

    test('the rate limit: the fourth request in the window is 429 with Retry-After and RateLimit headers', async () => {
      const clock = new ManualClock(Date.UTC(2027, 0, 1, 0, 0, 0));
      const limited = await startTestApp(h.db.database, { clock, config: { rateLimit: { max: 3, windowMs: 60_000 } } });
      try {
        const { key } = await createProjectWithKey(h.db.database);
        for (let i = 0; i < 3; i++) {
          const res = await limited.request('POST', '/cargo/load', { key, body: mockBody(`n${i}`) });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.headers.get('ratelimit-limit'), '3');
          assert.equal(res.headers.get('ratelimit-remaining'), String(2 - i));
          assert.ok(res.headers.get('ratelimit-reset'));
        }
        const res = await limited.request('POST', '/cargo/load', { key, body: mockBody('n3') });
        assertDetail(res, 429, 'Rate limit exceeded');
        const retryAfter = Number(res.headers.get('retry-after'));
        assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
        assert.equal(res.headers.get('ratelimit-limit'), '3');
        assert.equal(res.headers.get('ratelimit-remaining'), '0');
        const reset = Number(res.headers.get('ratelimit-reset'));
        assert.ok(Number.isInteger(reset) && reset > 0 && reset <= 60, `RateLimit-Reset ${reset}`);

        // Every cargo route counts, and the limit comes before the body is looked at.
        assertDetail(
          await limited.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`, { key }),
          429,
          'Rate limit exceeded',
        );
        assertDetail(
          await limited.request('GET', `/cargo/${UNKNOWN_CARGO}/result`, { key }),
          429,
          'Rate limit exceeded',
        );
        assertDetail(
          await limited.request('POST', '/cargo/load', { key, rawBody: '{', headers: JSON_TYPE }),
          429,
          'Rate limit exceeded',
        );
        // Authentication still comes first, and health is never limited.
        assert.equal((await limited.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`)).status, 401);
        assertDetail(
          await limited.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`, { key: `barge_sk_${'C'.repeat(32)}` }),
          401,
          'Invalid API key.',
        );
        assert.equal((await limited.request('GET', '/health')).status, 200);
      } finally {
        await limited.close();
      }
    });

    test('rate limits are per project: another project still gets 200; keys of one project share one', async () => {
      const clock = new ManualClock(Date.UTC(2027, 0, 1, 0, 0, 0));
      const limited = await startTestApp(h.db.database, { clock, config: { rateLimit: { max: 3, windowMs: 60_000 } } });
      try {
        const first = await createProjectWithKey(h.db.database);
        const second = await createProjectWithKey(h.db.database);
        const { key: otherKeyOfFirst } = await createApiKey(h.db.database, {
          projectId: first.projectId,
          name: 'second key',
          expiresAt: null,
          now: Date.now(),
        });
        for (const key of [first.key, otherKeyOfFirst, first.key]) {
          assert.equal((await limited.request('POST', '/cargo/load', { key, body: mockBody('hi') })).status, 200);
        }
        assert.equal(
          (await limited.request('POST', '/cargo/load', { key: otherKeyOfFirst, body: mockBody('hi') })).status,
          429,
        );
        assert.equal(
          (await limited.request('POST', '/cargo/load', { key: first.key, body: mockBody('hi') })).status,
          429,
        );
        const other = await limited.request('POST', '/cargo/load', { key: second.key, body: mockBody('hi') });
        assert.equal(other.status, 200, other.text);
        assert.equal(other.headers.get('ratelimit-remaining'), '2');
      } finally {
        await limited.close();
      }
    });

    test('GET /health is {"status":"ok"} and GET /health/ready is 200 with a live database', async () => {
      const health = await h.app.request('GET', '/health');
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: 'ok' });
      const ready = await h.app.request('GET', '/health/ready');
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.body, { status: 'ok' });
    });

    test('GET /health/ready is 503 once the database is gone; a failing request is a bare 500', async () => {
      // Its own connection, so closing it leaves the suite's database alone.
      const own = openDatabase(h.db.url);
      const broken = await startTestApp(own);
      const { key } = await createProjectWithKey(h.db.database);
      try {
        assert.equal((await broken.request('GET', '/health/ready')).status, 200);
        await own.close();
        const ready = await broken.request('GET', '/health/ready');
        assert.equal(ready.status, 503, ready.text);
        assert.deepEqual(Object.keys(ready.body), ['detail']);
        assert.equal(typeof ready.body.detail, 'string');
        assert.deepEqual((await broken.request('GET', '/health')).body, { status: 'ok' });

        const failed = await broken.request('GET', `/cargo/${UNKNOWN_CARGO}/tracking`, { key });
        assert.equal(failed.status, 500, failed.text);
        assert.deepEqual(Object.keys(failed.body).sort(), ['detail', 'request_id']);
        assert.equal(failed.body.detail, 'Internal server error');
        assert.match(failed.body.request_id, /^[0-9a-f-]{36}$/);
        assert.doesNotMatch(failed.text, /at .*\.(ts|js):\d+/, 'no stack trace');
      } finally {
        await broken.close();
      }
    });

    test('GET /docs serves HTML with no external (CDN) URL, and its assets locally', async () => {
      const res = await fetch(`${h.app.url}/docs`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      const html = await res.text();
      assert.match(html, /<html/i);
      assert.doesNotMatch(html, /(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i, 'no absolute URL to another host');
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
      assert.ok(assets.length > 0);
      for (const asset of assets) {
        const assetUrl = new URL(asset, res.url);
        assert.equal(assetUrl.origin, new URL(h.app.url).origin, asset);
        const assetRes = await fetch(assetUrl);
        assert.equal(assetRes.status, 200, asset);
        await assetRes.arrayBuffer();
      }
    });

    test('GET /openapi.json is an OpenAPI 3.1.0 document of the whole API', async () => {
      const res = await h.app.request('GET', '/openapi.json');
      assert.equal(res.status, 200);
      const doc = res.body;
      assert.equal(doc.openapi, '3.1.0');
      assert.equal(typeof doc.info.title, 'string');
      assert.equal(typeof doc.info.version, 'string');

      const schemes = Object.values(doc.components.securitySchemes) as { type: string; in: string; name: string }[];
      const schemeName = Object.keys(doc.components.securitySchemes).find(
        (name) => doc.components.securitySchemes[name].name === 'X-API-Key',
      );
      assert.ok(schemeName, JSON.stringify(schemes));
      assert.deepEqual(doc.components.securitySchemes[schemeName], { type: 'apiKey', in: 'header', name: 'X-API-Key' });

      const operations: [string, string][] = [
        ['/cargo/load', 'post'],
        ['/cargo/{cargo_id}/tracking', 'get'],
        ['/cargo/{cargo_id}/result', 'get'],
        ['/usage', 'get'],
        ['/health', 'get'],
      ];
      for (const [path, method] of operations) {
        const operation = doc.paths[path]?.[method];
        assert.ok(operation, `${method.toUpperCase()} ${path} is documented`);
        assert.ok(hasExamples(operation), `${method.toUpperCase()} ${path} has examples`);
        for (const [status, response] of Object.entries(operation.responses) as [string, any][]) {
          assert.ok(response.description, `${path} ${status} has a description`);
        }
      }
      for (const [path, method] of operations.slice(0, 4)) {
        const operation = doc.paths[path][method];
        assert.deepEqual(operation.security, [{ [schemeName]: [] }], `${path} requires X-API-Key`);
        for (const status of ['401', '403', '429']) {
          assert.ok(operation.responses[status], `${path} documents ${status}`);
        }
      }
      const result = doc.paths['/cargo/{cargo_id}/result'].get.responses;
      for (const status of ['200', '404', '409', '410']) assert.ok(result[status], `result documents ${status}`);
      const load = doc.paths['/cargo/load'].post;
      for (const status of ['200', '400', '402', '413', '422'])
        assert.ok(load.responses[status], `load documents ${status}`);
      const documents = (status: string, code: string) =>
        assert.ok(JSON.stringify(load.responses[status]).includes(`"error":"${code}"`), `load documents ${code}`);
      documents('402', 'budget_exceeded');
      documents('402', 'unpriced_model');
      documents('403', 'model_not_allowed');
      assert.ok(load.requestBody.content['application/json'].schema.properties.params);
      const usage = doc.paths['/usage'].get;
      assert.deepEqual(usage.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`).sort(), [
        'query:from',
        'query:to',
      ]);
      assert.ok(usage.responses['400'], 'usage documents 400');
      assert.equal(doc.paths['/health'].get.security, undefined, 'health needs no key');
    });

    test('fuzz: odd bodies never produce a 5xx', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      for (const rawBody of FUZZ_BODIES) {
        const res = await h.app.request('POST', '/cargo/load', { key, rawBody, headers: JSON_TYPE });
        const shown = rawBody.length > 120 ? `${rawBody.slice(0, 120)}…` : rawBody;
        assert.ok(res.status < 500, `${shown} gave ${res.status}: ${res.text}`);
        assert.ok(res.body !== null && typeof res.body === 'object', `${shown}: JSON body`);
        if (res.status === 200) assert.match(res.body.cargo_id, /^crg_/);
        else assert.ok('detail' in res.body, `${shown}: ${res.text}`);
      }
      // Nothing leaked onto the prototype of plain objects.
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(({} as Record<string, unknown>).max_tokens, undefined);
    });
  });
}

function hasExamples(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'examples' || key === 'example') && value !== undefined) return true;
    if (hasExamples(value)) return true;
  }
  return false;
}
