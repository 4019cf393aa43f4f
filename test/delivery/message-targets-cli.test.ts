/**
 * The message targets from outside: `barge connection check` per target kind against the
 * emulators, and the incident mail of a denied connection surviving a SIGKILL of the process that
 * was sending it (the outbox row was written with the connection's change, so the next process
 * sends it, exactly once).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import {
  type EventBridgeEndpoint,
  type SnsEndpoint,
  type SqsEndpoint,
  startEventBridgeEndpoint,
  startSnsEndpoint,
  startSqsEndpoint,
} from '../helpers/aws-messaging.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { notifyTo, type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';
import { SERVICE_CREDENTIALS } from '../helpers/s3-server.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { freePort, waitFor } from '../helpers/wait.js';

for (const backend of await backends({ childProcesses: true })) {
  describe(`message targets from the command line on ${backend.name}`, () => {
    let db: TestDatabase;
    let rig: ObjectStoreRig;
    let sqs: SqsEndpoint;
    let sns: SnsEndpoint;
    let eventBridge: EventBridgeEndpoint;
    let env: Record<string, string>;
    const children: BargeProcess[] = [];

    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
      rig = await startObjectStoreRig();
      sqs = await startSqsEndpoint();
      sns = await startSnsEndpoint();
      eventBridge = await startEventBridgeEndpoint();
      env = {
        BARGE_DATABASE_URL: db.url,
        BARGE_ENV: 'production',
        BARGE_ALLOW_PRIVATE_CALLBACKS: 'true',
        BARGE_LOG_LEVEL: 'warn',
        BARGE_AWS_STS_ENDPOINT: rig.sts.url,
        BARGE_AWS_SQS_ENDPOINT: sqs.url,
        BARGE_AWS_SNS_ENDPOINT: sns.url,
        BARGE_AWS_EVENTBRIDGE_ENDPOINT: eventBridge.url,
        BARGE_SMTP_URL: rig.smtp.url,
        BARGE_PUBLIC_BASE_URL: 'https://barge.test',
        AWS_ACCESS_KEY_ID: SERVICE_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: SERVICE_CREDENTIALS.secretAccessKey,
      };
    });
    after(async () => {
      for (const child of children) if (child.alive) await child.stop('SIGKILL');
      await Promise.all([sqs.close(), sns.close(), eventBridge.close()]);
      await rig.close();
      await db.drop();
    });

    async function barge(...args: string[]): Promise<{ code: number | null; json: any; stderr: string }> {
      const child = new BargeProcess([...args, '--json'], env);
      const exit = await child.exited;
      const line = child.lines.find((l) => l.startsWith('{'));
      return { code: exit.code, json: line ? JSON.parse(line) : null, stderr: child.stderr };
    }

    test('connection check sends one marked message per target kind, once a minute per connection', async () => {
      const { projectId } = await createProjectWithKey(db.database);
      const queue = await sqs.createQueue(`check-${Date.now()}`);
      const topic = await sns.createTopic(`check-${Date.now()}`);
      const bus = await eventBridge.createBus(`check-${Date.now()}`);
      const cases = [
        {
          flag: ['--queue-url', queue.url],
          arn: queue.arn,
          seen: () => sqs.messages.filter((m) => m.queueArn === queue.arn),
        },
        {
          flag: ['--topic-arn', topic.arn],
          arn: topic.arn,
          seen: () => sns.messages.filter((m) => m.topicArn === topic.arn),
        },
        {
          flag: ['--event-bus-arn', bus.arn],
          arn: bus.arn,
          seen: () => eventBridge.events.filter((e) => e.busArn === bus.arn),
        },
      ];
      for (const c of cases) {
        const connection = await rig.roleConnection(db.database, projectId);
        const run = await barge('connection', 'check', connection.id, ...c.flag);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.json.ok, true, JSON.stringify(run.json));
        assert.equal(run.json.target, c.arn);
        assert.equal(run.json.capabilities.assume_role.status, 'ok');
        assert.equal(run.json.capabilities.send.status, 'ok');
        const seen = c.seen();
        assert.equal(seen.length, 1);
        const message = seen[0] as Record<string, any>;
        if ('detail' in message) assert.equal(message.detail, '{"barge_verification":true}');
        else {
          assert.equal(message.body ?? message.message, '{"barge_verification":true}');
          assert.equal(message.attributes.barge_verification?.StringValue, 'true');
        }
        // The session held only the one action on the one target.
        const policy = JSON.parse(rig.sts.calls.at(-1)?.policy ?? '{}');
        assert.equal(policy.Statement[0].Resource, c.arn);

        const again = await barge('connection', 'check', connection.id, ...c.flag);
        assert.notEqual(again.code, 0);
        assert.match(again.stderr, /less than 60 s ago/);
        assert.equal(c.seen().length, 1, 'a refused check sends nothing');
      }
    });

    test('a denied check reports assume role failed and exits non-zero; --role-only sends nothing', async () => {
      const { projectId } = await createProjectWithKey(db.database);
      const queue = await sqs.createQueue(`denied-${Date.now()}`);
      const connection = await rig.roleConnection(db.database, projectId);
      const probe = await barge('connection', 'check', connection.id, '--queue-url', queue.url, '--role-only');
      assert.equal(probe.code, 0, probe.stderr);
      assert.equal(probe.json.capabilities.send.status, 'skipped');
      rig.sts.deny(connection.roleArn as string);
      const run = await barge('connection', 'check', connection.id, '--queue-url', queue.url);
      assert.notEqual(run.code, 0);
      assert.equal(run.json.ok, false);
      assert.equal(run.json.capabilities.assume_role.status, 'failed');
      assert.match(run.json.capabilities.assume_role.detail, /^assume_role_denied/);
      assert.equal(sqs.messages.filter((m) => m.queueArn === queue.arn).length, 0);
    });

    test('the incident mail of a denied connection goes out once, also when the sender is killed mid-send', async () => {
      const { key, projectId, slug } = await createProjectWithKey(db.database);
      await notifyTo(db.database, slug, 'ops@customer.test');
      const queue = await sqs.createQueue(`incident-${Date.now()}`);
      const connection = await rig.roleConnection(db.database, projectId);
      sqs.deny(queue.arn);
      const mailsBefore = rig.smtp.messages.length;
      const serve = async () => {
        const port = await freePort();
        const child = new BargeProcess(['serve', '--json'], {
          ...env,
          PORT: String(port),
          HOST: '127.0.0.1',
          BARGE_MOCK_LATENCY_MS: '0',
          BARGE_BATCH_MAX_WAIT_MS: '0',
          BARGE_LEASE_MS: '2000',
          BARGE_WEBHOOK_RETRY_DELAYS_MS: '600000',
        });
        children.push(child);
        return { child, url: (await child.started()).url as string };
      };

      // The mail server takes the connection and never answers: the first process is mid-send.
      rig.smtp.hang(true);
      const first = await serve();
      const res = await fetch(`${first.url}/cargo/load`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(
          mockBody('incident', { callback: { type: 'sqs', connection_id: connection.id, queue_url: queue.url } }),
        ),
      });
      assert.equal(res.status, 200, await res.text());
      const outbox = () => db.database.write.selectFrom('outbox').selectAll().execute();
      await waitFor('the incident mail being sent', outbox, (rows) => rows.some((r) => r.locked_by !== null), {
        timeoutMs: 15_000,
      });
      const status = await db.database.write
        .selectFrom('connections')
        .select('status')
        .where('id', '=', connection.id)
        .executeTakeFirstOrThrow();
      assert.equal(status.status, 'failed');
      await first.child.stop('SIGKILL');
      assert.equal(rig.smtp.messages.length, mailsBefore, 'nothing was sent by the killed process');

      rig.smtp.hang(false);
      await serve();
      await waitFor(
        'the incident mail',
        () => rig.smtp.messages.length,
        (n) => n > mailsBefore,
        { timeoutMs: 15_000 },
      );
      // Nothing else comes: one incident, one mail.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const mails = rig.smtp.messages.slice(mailsBefore);
      assert.equal(mails.length, 1);
      assert.deepEqual(mails[0]?.to, ['ops@customer.test']);
      assert.match(mails[0]?.headers.subject ?? '', new RegExp(`connection ${connection.id} failed`));
      assert.match(mails[0]?.text ?? '', new RegExp(queue.url));
      const rows = await outbox();
      assert.deepEqual(
        rows.map((r) => r.status),
        ['sent'],
      );
    });
  });
}
