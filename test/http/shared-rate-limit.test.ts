/**
 * Per-project rate limits shared by several API processes: exactly through Redis (BARGE_REDIS_URL),
 * and on PostgreSQL without Redis through counts each process adds to the database in batches,
 * never one write per request, within the stated bound (what the other processes accepted in one
 * sync interval).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { ManualClock } from '../../src/domain/clock.js';
import { RATE_LIMIT_SYNC_MS } from '../../src/http/rate-limit.js';
import { openDatabase } from '../../src/store/database.js';
import { createProjectWithKey, mockBody, startTestApp, type TestApp } from '../helpers/app.js';
import { assertDetail } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { sleep } from '../helpers/wait.js';

const REDIS_URL = process.env.BARGE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Like the PostgreSQL leg: the Redis case runs when a Redis answers at BARGE_TEST_REDIS_URL, and
 * under CI one is required (a missing server fails the run instead of quietly leaving it out).
 */
async function redisReachable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch (err) {
    if (process.env.CI === 'true')
      throw new Error(`Redis is required under CI but ${REDIS_URL} is not reachable: ${String(err)}`);
    return false;
  } finally {
    redis.disconnect();
  }
}
const withRedis = await redisReachable();
const config = { rateLimit: { max: 3, windowMs: 60_000 } };

for (const backend of await backends({ childProcesses: true })) {
  describe(`rate limits shared by two API instances on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2027, 0, 1, 0, 0, 0));
    const h = harness(backend, { clock });

    /** A second API over the same database (its own connection pool, as a second process has). */
    async function twoApis(extra: object = {}): Promise<[TestApp, TestApp, () => Promise<void>]> {
      const second = openDatabase(h.db.url);
      const one = await startTestApp(h.db.database, { clock, config: { ...config, ...extra } });
      const two = await startTestApp(second, { clock, config: { ...config, ...extra } });
      return [
        one,
        two,
        async () => {
          await one.close();
          await two.close();
          await second.close();
        },
      ];
    }

    if (withRedis)
      test('with Redis the count is exact across processes', async () => {
        const [one, two, close] = await twoApis({ redisUrl: REDIS_URL });
        try {
          const { key } = await createProjectWithKey(h.db.database);
          const post = (target: TestApp) => target.request('POST', '/cargo/load', { key, body: mockBody('hi') });
          assert.equal((await post(one)).status, 200);
          assert.equal((await post(two)).status, 200);
          const third = await post(one);
          assert.equal(third.status, 200);
          assert.equal(third.headers.get('ratelimit-remaining'), '0');
          assertDetail(await post(two), 429, 'Rate limit exceeded');
          assertDetail(await post(one), 429, 'Rate limit exceeded');
        } finally {
          await close();
        }
      });

    if (backend.name === 'postgres') {
      test('without Redis, processes share the count through the database in batches', async () => {
        const [one, two, close] = await twoApis();
        try {
          const { key, projectId } = await createProjectWithKey(h.db.database);
          const post = (target: TestApp) => target.request('POST', '/cargo/load', { key, body: mockBody('hi') });
          // Apart by more than a sync interval, each process knows the other's hits.
          for (const target of [one, two, one]) {
            assert.equal((await post(target)).status, 200);
            await sleep(RATE_LIMIT_SYNC_MS * 3);
          }
          assertDetail(await post(two), 429, 'Rate limit exceeded');
          assertDetail(await post(one), 429, 'Rate limit exceeded');
          await sleep(RATE_LIMIT_SYNC_MS * 3);
          const windows = await h.db.database.read
            .selectFrom('rate_limit_windows')
            .selectAll()
            .where('key', '=', projectId)
            .execute();
          assert.equal(windows.length, 1);
          assert.equal(windows[0]?.hits, 5, 'every hit is counted once');

          // The next window starts afresh for both.
          clock.advance(60_000);
          assert.equal((await post(two)).status, 200);
        } finally {
          await close();
        }
      });

      test('a burst through two processes is held within the bound, and every request is counted', async () => {
        const [one, two, close] = await twoApis({ rateLimit: { max: 10, windowMs: 60_000 } });
        try {
          const { key, projectId } = await createProjectWithKey(h.db.database);
          const post = (target: TestApp) => target.request('POST', '/cargo/load', { key, body: mockBody('hi') });
          const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i % 2 ? one : two)));
          const accepted = statuses.filter((r) => r.status === 200).length;
          // Together they may pass the limit by what the other accepted before a sync: at most the
          // limit again. They may also refuse a few below it: each counts the other's requests as
          // they arrive, those it goes on to refuse included (the safe direction).
          assert.ok(accepted >= 1 && accepted <= 20, `${accepted} accepted`);
          assert.equal(statuses.filter((r) => r.status === 429).length, 40 - accepted);
          await sleep(RATE_LIMIT_SYNC_MS * 3);
          const [window] = await h.db.database.read
            .selectFrom('rate_limit_windows')
            .selectAll()
            .where('key', '=', projectId)
            .execute();
          assert.equal(window?.hits, 40, 'every request is counted');
          // The next requests know the shared total at once.
          assertDetail(await post(one), 429, 'Rate limit exceeded');
        } finally {
          await close();
        }
      });
    }
  });
}
