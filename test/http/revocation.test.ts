/**
 * Revocation at once, from outside: two `barge serve --role api` children with the default key
 * cache (10 s), and the change made by the `barge` CLI in a third process. The next request after
 * the CLI returns must see it; a second is allowed for it to reach every process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { assertBuildIsFresh, BargeProcess, startApiProcesses } from '../helpers/serve.js';
import { sleep } from '../helpers/wait.js';

const UNKNOWN_CARGO = `crg_${'0'.repeat(26)}`;
const VISIBLE_WITHIN_MS = 1000;

for (const backend of await backends({ childProcesses: true })) {
  describe(`revocation takes effect on the next request on ${backend.name}`, () => {
    let db: TestDatabase;
    const servers: { child: BargeProcess; url: string }[] = [];

    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
      servers.push(...(await startApiProcesses(db.url, 2)));
    });
    after(async () => {
      for (const { child } of servers) await child.stop('SIGTERM');
      await db.drop();
    });

    const status = async (url: string, key: string) =>
      (await fetch(`${url}/cargo/${UNKNOWN_CARGO}/tracking`, { headers: { 'x-api-key': key } })).status;

    async function cli(...args: string[]): Promise<void> {
      const child = new BargeProcess([...args, '--json'], { BARGE_DATABASE_URL: db.url, BARGE_LOG_LEVEL: 'warn' });
      const exit = await child.exited;
      assert.equal(exit.code, 0, `barge ${args.join(' ')} failed: ${child.stderr}`);
    }

    /** Every server answers `expected` within VISIBLE_WITHIN_MS of now; returns how long each took. */
    async function seenEverywhere(key: string, expected: number): Promise<number[]> {
      const since = Date.now();
      return Promise.all(
        servers.map(async ({ url }) => {
          for (;;) {
            const got = await status(url, key);
            const waited = Date.now() - since;
            if (got === expected) return waited;
            assert.ok(waited < VISIBLE_WITHIN_MS, `${url} still answered ${got} after ${waited} ms`);
            await sleep(20);
          }
        }),
      );
    }

    test('a key deactivated by the CLI is refused by every API process', async () => {
      const { key, keyId } = await createProjectWithKey(db.database);
      // Both processes have the key in their cache now.
      for (const { url } of servers) assert.equal(await status(url, key), 404);
      await cli('key', 'deactivate', keyId);
      await seenEverywhere(key, 401);
    });

    test('a deactivated project answers 403 at once, and a reactivated one is served again', async () => {
      const { key, slug } = await createProjectWithKey(db.database);
      for (const { url } of servers) assert.equal(await status(url, key), 404);
      await cli('project', 'deactivate', slug);
      await seenEverywhere(key, 403);
      await cli('project', 'activate', slug);
      await seenEverywhere(key, 404);
    });

    test('an admin token revoked by the CLI is refused by every API process on its next request', async () => {
      const { slug } = await createProjectWithKey(db.database);
      const made = new BargeProcess(['admin-token', 'create', '--name', 'ops', '--project', slug, '--json'], {
        BARGE_DATABASE_URL: db.url,
        BARGE_LOG_LEVEL: 'warn',
      });
      assert.equal((await made.exited).code, 0, made.logLines.join('\n'));
      const { id, token } = JSON.parse(made.lines.find((l) => l.startsWith('{')) ?? '') as {
        id: string;
        token: string;
      };
      const admin = async (url: string) =>
        (await fetch(`${url}/admin/v1/projects/${slug}`, { headers: { authorization: `Bearer ${token}` } })).status;
      for (const { url } of servers) assert.equal(await admin(url), 200);
      await cli('admin-token', 'revoke', id);
      // No grace at all: the admin scope keeps no cache.
      for (const { url } of servers) assert.equal(await admin(url), 401);
    });

    test('a key created after its hash was looked up works at once', async () => {
      const { key } = await createProjectWithKey(db.database);
      for (const { url } of servers) assert.equal(await status(url, key), 404);
      // Requests with an expired key are refused at once whatever the cache holds.
      const expiring = await createProjectWithKey(db.database, { expiresAt: Date.now() + 1500 });
      for (const { url } of servers) assert.equal(await status(url, expiring.key), 404);
      await sleep(1600);
      for (const { url } of servers) assert.equal(await status(url, expiring.key), 401);
    });
  });
}
