/**
 * The limit before authentication, from outside: a `barge serve` child allowing 5 failed
 * authentications per address and window. Past them, a missing or unknown key is answered 429
 * with a `detail` and Retry-After before any lookup, while a key that already passed keeps working
 * from the same address. And the key cache: random well-formed keys cannot evict a real key.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.js';
import { Authenticator } from '../../src/http/auth.js';
import { AuthFailureLimiter } from '../../src/http/auth-failures.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { freePort } from '../helpers/wait.js';

const UNKNOWN_CARGO = `crg_${'0'.repeat(26)}`;
const LIMIT = 5;
const randomKey = () =>
  `barge_sk_${randomBytes(48)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 32)}`;

for (const backend of await backends({ childProcesses: true })) {
  describe(`failed authentications are limited per address before the key lookup on ${backend.name}`, () => {
    let db: TestDatabase;
    let child: BargeProcess;
    let url: string;

    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
      child = new BargeProcess(['serve', '--role', 'api', '--json'], {
        BARGE_DATABASE_URL: db.url,
        BARGE_ENV: 'production',
        BARGE_LOG_LEVEL: 'warn',
        BARGE_AUTH_FAILURE_LIMIT: String(LIMIT),
        BARGE_AUTH_FAILURE_WINDOW_MS: '60000',
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
      });
      url = (await child.started()).url as string;
    });
    after(async () => {
      await child.stop('SIGTERM');
      await db.drop();
    });

    const track = (key: string | undefined) =>
      fetch(`${url}/cargo/${UNKNOWN_CARGO}/tracking`, { headers: key === undefined ? {} : { 'x-api-key': key } });

    test('past the limit, unknown and missing keys get 429 with detail and Retry-After; a known key still passes', async () => {
      const { key } = await createProjectWithKey(db.database);
      assert.equal((await track(key)).status, 404, 'the real key passes authentication');
      for (let i = 0; i < LIMIT; i++) assert.equal((await track(randomKey())).status, 401);

      for (const refused of [await track(randomKey()), await track(undefined), await track('not-a-key')]) {
        assert.equal(refused.status, 429);
        const body = (await refused.json()) as { detail: string };
        assert.match(body.detail, /too many requests without a valid API key/i);
        const retryAfter = Number(refused.headers.get('retry-after'));
        assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers.get('retry-after')}`);
      }
      assert.equal((await track(key)).status, 404, 'a key that passed before is still let through');
    });
  });
}

for (const backend of await backends()) {
  describe(`the key cache on ${backend.name}`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await backend.create();
    });
    after(() => db.drop());

    test('random well-formed keys cannot evict a real key from the cache', async () => {
      const authenticator = new Authenticator(db.database, systemClock, { cacheTtlMs: 60_000, cacheMaxEntries: 10 });
      const { key, keyId } = await createProjectWithKey(db.database);
      assert.equal((await authenticator.authenticate(key)).keyId, keyId);
      for (let i = 0; i < 50; i++) {
        await assert.rejects(authenticator.authenticate(randomKey()), { code: 'invalid_api_key' });
      }
      // Gone from the database without the change counter moving: only a cached entry can answer.
      await db.database.write.deleteFrom('api_keys').where('id', '=', keyId).execute();
      assert.equal((await authenticator.authenticate(key)).keyId, keyId, 'the real key was evicted by misses');
    });

    test('the failure limit counts per address, and IPv6 per /64', () => {
      let now = 0;
      const limiter = new AuthFailureLimiter({ max: 2, windowMs: 1000 }, () => now);
      limiter.fail('2001:db8:1:2::1');
      limiter.fail('2001:db8:1:2:ffff::9');
      assert.equal(limiter.blockedFor('2001:db8:1:2::77'), 1);
      assert.equal(limiter.blockedFor('2001:db8:1:3::1'), null);
      assert.equal(limiter.blockedFor('192.0.2.1'), null);
      now = 1000;
      assert.equal(limiter.blockedFor('2001:db8:1:2::77'), null, 'a new window forgives');
    });

    test('the failure limit holds a bounded number of addresses', () => {
      const limiter = new AuthFailureLimiter({ max: 1, windowMs: 60_000, maxAddresses: 100 });
      for (let i = 0; i < 10_000; i++) limiter.fail(`10.0.${i >> 8}.${i & 255}`);
      assert.ok((limiter as unknown as { windows: Map<string, unknown> }).windows.size <= 100);
    });
  });
}
