/**
 * Deleting a connection from outside: `barge serve` delivers through a connection whose bucket
 * keeps failing, `barge connection delete` runs, and tracking shows the pending deliveries failed
 * at once (connection_not_found), not at their next retry; a cargo with another delivery still
 * pending stays callback_pending.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';
import { startReceiver } from '../helpers/receiver.js';
import { s3ErrorXml } from '../helpers/s3-proxy.js';
import { SERVICE_CREDENTIALS } from '../helpers/s3-server.js';
import { assertBuildIsFresh, BargeProcess, loadOverHttp } from '../helpers/serve.js';
import { freePort, waitFor } from '../helpers/wait.js';

for (const backend of await backends({ childProcesses: true })) {
  describe(`barge connection delete with deliveries pending, on ${backend.name}`, () => {
    let db: TestDatabase;
    let rig: ObjectStoreRig;
    let env: Record<string, string>;
    const children: BargeProcess[] = [];

    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
      rig = await startObjectStoreRig();
      env = {
        BARGE_DATABASE_URL: db.url,
        BARGE_LOG_LEVEL: 'warn',
        BARGE_AWS_S3_ENDPOINT: rig.proxy.url,
        BARGE_AWS_STS_ENDPOINT: rig.sts.url,
        BARGE_AWS_S3_FORCE_PATH_STYLE: 'true',
        BARGE_SECRET_KEY: randomBytes(32).toString('hex'),
        AWS_ACCESS_KEY_ID: SERVICE_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: SERVICE_CREDENTIALS.secretAccessKey,
      };
    });
    after(async () => {
      for (const child of children) if (child.alive) await child.stop('SIGKILL');
      await rig.close();
      await db.drop();
    });

    test('the pending deliveries fail at once with connection_not_found; a cargo still delivering elsewhere waits', async () => {
      const { key, projectId } = await createProjectWithKey(db.database);
      const connection = await rig.roleConnection(db.database, projectId);
      const bucket = await rig.bucket();
      // The bucket answers every write with a 500: each delivery waits for its retry, 10 minutes on.
      rig.proxy.script((r) =>
        r.method === 'PUT' && r.url.startsWith(`/${bucket}/`)
          ? { kind: 'answer', answer: { status: 500, body: s3ErrorXml('InternalError', 'We encountered an error') } }
          : { kind: 'forward' },
      );
      const receiver = await startReceiver((_r, _i, res) => res.writeHead(503).end('busy'));
      try {
        const port = await freePort();
        const serve = new BargeProcess(['serve', '--json'], {
          ...env,
          PORT: String(port),
          HOST: '127.0.0.1',
          BARGE_MOCK_LATENCY_MS: '0',
          BARGE_BATCH_MAX_WAIT_MS: '0',
          BARGE_WEBHOOK_RETRY_DELAYS_MS: '600000,600000',
        });
        children.push(serve);
        const url = (await serve.started()).url as string;
        const callback = { type: 'object_store', connection_id: connection.id, bucket_arn: `arn:aws:s3:::${bucket}` };
        const objectOnly = [
          await loadOverHttp(url, key, mockBody('one', { callback })),
          await loadOverHttp(url, key, mockBody('two', { callback })),
        ];
        const withWebhook = await loadOverHttp(
          url,
          key,
          mockBody('three', { callback, callback_url: `http://127.0.0.1:${receiver.port}/hook` }),
        );
        const tracking = async (id: string) => {
          const res = await fetch(`${url}/cargo/${id}/tracking`, { headers: { 'x-api-key': key } });
          assert.equal(res.status, 200);
          return (await res.json()) as any;
        };
        for (const id of [...objectOnly, withWebhook]) {
          await waitFor(
            `the first attempts of ${id}`,
            () => tracking(id),
            (t) =>
              t.status === 'callback_pending' &&
              t.deliveries.every((d: any) => d.attempts === 1 && d.status === 'pending'),
            { timeoutMs: 20_000 },
          );
        }

        const deleted = new BargeProcess(['connection', 'delete', connection.id, '--json'], env);
        assert.equal((await deleted.exited).code, 0, deleted.stderr);
        assert.deepEqual(JSON.parse(deleted.lines[0] as string), { id: connection.id, deleted: true });

        // At once: no attempt is due for 10 minutes.
        for (const id of objectOnly) {
          const t = await tracking(id);
          assert.equal(t.status, 'callback_failed', JSON.stringify(t));
          assert.equal(t.status_description, 'Delivery failed: the connection was deleted');
          assert.deepEqual(
            { ...t.deliveries[0], last_error: undefined },
            {
              channel: 'object_store',
              status: 'failed',
              attempts: 2,
              last_error: undefined,
              last_status_code: null,
              next_attempt_at: null,
            },
          );
          assert.equal(
            t.deliveries[0].last_error,
            `connection_not_found: connection ${connection.id} no longer exists in this project`,
          );
        }
        const t = await tracking(withWebhook);
        assert.equal(t.status, 'callback_pending', 'its webhook is still being retried');
        assert.deepEqual(t.deliveries.map((d: any) => [d.channel, d.status]).sort(), [
          ['object_store', 'failed'],
          ['webhook', 'pending'],
        ]);
        const attempts = await db.database.write
          .selectFrom('delivery_attempts as a')
          .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
          .select(['d.cargo_id', 'a.attempt', 'a.error_class'])
          .where('d.cargo_id', 'in', objectOnly)
          .where('a.attempt', '=', 2)
          .execute();
        assert.deepEqual(
          attempts.map((a) => a.error_class),
          ['connection_not_found', 'connection_not_found'],
        );
        assert.equal(serve.alive, true);
      } finally {
        await receiver.close();
      }
    });
  });
}
