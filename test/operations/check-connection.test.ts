/** checkConnection: the target's kind, validation, refusals, the check interval; fake checkers, then S3 and STS. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import type { MessageCheckReport } from '../../src/delivery/messages/message-check.js';
import type { CapabilityResult, CheckReport } from '../../src/delivery/object-store/capability-check.js';
import type { CapabilityCheckers } from '../../src/operations/capability-checkers.js';
import { checkConnection } from '../../src/operations/check-connection.js';
import { createConnection } from '../../src/operations/create-connection.js';
import { showConnection } from '../../src/operations/show-connection.js';
import type { Connection } from '../../src/store/admin/connections.js';
import { testConfig } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';
import { depsOf, newProject, refused, value } from './support.js';

const ROLE = 'arn:aws:iam::444455556666:role/barge-delivery';
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/444455556666/results';
const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:444455556666:results';
const TOPIC_ARN = 'arn:aws:sns:us-east-1:444455556666:done';
const BUS_ARN = 'arn:aws:events:us-east-1:444455556666:event-bus/barge';
const ok: CapabilityResult = { status: 'ok', detail: 'fine' };

/** Checkers that record what they were asked, answer as told, and never touch AWS. */
function fakeCheckers(answer: { waitMs?: number } = {}) {
  const calls: { kind: string; input: Record<string, unknown> }[] = [];
  let opened = 0;
  let closed = 0;
  const checkers: CapabilityCheckers = {
    async checkBucket(input) {
      calls.push({ kind: 'bucket', input });
      if (answer.waitMs) return { refused: true, waitMs: answer.waitMs };
      return {
        connectionId: input.connection.id,
        bucket: input.bucket,
        key: input.roleOnly ? null : `${input.keyPrefix}svc-verify.json`,
        ok: true,
        capabilities: { assumeRole: ok, putObject: ok, encryptionKey: ok },
      } satisfies CheckReport;
    },
    async checkMessageTarget(input) {
      calls.push({ kind: 'message', input });
      if (answer.waitMs) return { refused: true, waitMs: answer.waitMs };
      return {
        connectionId: input.connection.id,
        target: input.resolved.arn,
        ok: false,
        capabilities: { assumeRole: ok, send: { status: 'failed', detail: 'denied' } },
      } satisfies MessageCheckReport;
    },
    close: () => {
      closed++;
    },
  };
  return {
    open: async () => {
      opened++;
      return checkers;
    },
    calls,
    counts: () => ({ opened, closed }),
  };
}

for (const backend of await backends()) {
  describe(`checkConnection on ${backend.name}`, () => {
    let db: TestDatabase;
    let base: ReturnType<typeof depsOf>;
    const config = testConfig();
    before(async () => {
      db = await backend.create();
      base = depsOf(db.database);
    });
    after(() => db.drop());

    async function connectionWith(allow?: string[]): Promise<Connection> {
      const project = await newProject(base);
      const deps = { ...base, config: { secretKey: null } };
      return value(await createConnection(deps, { slug: project.slug, roleArn: ROLE, allow })).connection;
    }

    test('a bucket: validated, on the allow-list, checked with the default prefix, the checkers closed after', async () => {
      const connection = await connectionWith(['arn:aws:s3:::bucket-one']);
      const fake = fakeCheckers();
      const checked = value(
        await checkConnection(
          { ...base, config, openCheckers: fake.open },
          { connectionId: connection.id, bucket: 'arn:aws:s3:::bucket-one' },
        ),
      );
      assert.equal(checked.kind, 'bucket');
      assert.equal(checked.kind === 'bucket' && checked.bucketArn, 'arn:aws:s3:::bucket-one');
      assert.equal(checked.report.ok, true);
      assert.deepEqual(fake.calls, [
        { kind: 'bucket', input: { connection, bucket: 'bucket-one', keyPrefix: 'convoy/', roleOnly: false } },
      ]);
      assert.deepEqual(fake.counts(), { opened: 1, closed: 1 });

      value(
        await checkConnection(
          { ...base, config, openCheckers: fake.open },
          { connectionId: connection.id, bucket: 'arn:aws:s3:::bucket-one', keyPrefix: 'in/', roleOnly: true },
        ),
      );
      assert.deepEqual(fake.calls[1]?.input, { connection, bucket: 'bucket-one', keyPrefix: 'in/', roleOnly: true });
    });

    test('a message target: the kind is picked from the one target given, resolved and checked', async () => {
      const connection = await connectionWith([QUEUE_ARN, TOPIC_ARN, BUS_ARN]);
      const fake = fakeCheckers();
      const deps = { ...base, config, openCheckers: fake.open };
      const cases = [
        {
          input: { queueUrl: QUEUE_URL },
          arn: QUEUE_ARN,
          target: { type: 'sqs', connection_id: connection.id, queue_url: QUEUE_URL },
        },
        {
          input: { topicArn: TOPIC_ARN },
          arn: TOPIC_ARN,
          target: { type: 'sns', connection_id: connection.id, topic_arn: TOPIC_ARN },
        },
        {
          input: { eventBusArn: BUS_ARN, detailType: 'custom.type' },
          arn: BUS_ARN,
          target: {
            type: 'eventbridge',
            connection_id: connection.id,
            event_bus_arn: BUS_ARN,
            detail_type: 'custom.type',
          },
        },
        {
          input: { eventBusArn: BUS_ARN },
          arn: BUS_ARN,
          target: {
            type: 'eventbridge',
            connection_id: connection.id,
            event_bus_arn: BUS_ARN,
            detail_type: 'barge.cargo.finished',
          },
        },
      ];
      for (const c of cases) {
        const checked = value(await checkConnection(deps, { connectionId: connection.id, ...c.input }));
        assert.equal(checked.kind, 'message');
        // A check that ran and failed is a result, not a refusal.
        assert.equal(checked.report.ok, false);
        const call = fake.calls.at(-1) as (typeof fake.calls)[number];
        assert.equal(call.kind, 'message');
        assert.deepEqual(call.input.target, c.target);
        assert.equal((call.input.resolved as { arn: string }).arn, c.arn);
        assert.equal(checked.kind === 'message' && checked.report.target, c.arn);
      }
      assert.deepEqual(fake.counts(), { opened: 4, closed: 4 });
    });

    test('refusals: no or several targets, an unknown connection, a bad target, one off the allow-list', async () => {
      const connection = await connectionWith(['arn:aws:s3:::only-this', TOPIC_ARN]);
      const fake = fakeCheckers();
      const deps = { ...base, config, openCheckers: fake.open };
      const id = connection.id;
      refused(await checkConnection(deps, { connectionId: id }), 'invalid_target', /give one target/);
      refused(
        await checkConnection(deps, { connectionId: id, bucket: 'arn:aws:s3:::only-this', topicArn: TOPIC_ARN }),
        'invalid_target',
      );
      refused(
        await checkConnection(deps, {
          connectionId: 'conn_00000000000000000000000000',
          bucket: 'arn:aws:s3:::only-this',
        }),
        'connection_not_found',
        /^no connection 'conn_00000000000000000000000000'$/,
      );
      const bucket = refused(
        await checkConnection(deps, { connectionId: id, bucket: 'arn:aws:s3:::a' }),
        'invalid_bucket',
        /^invalid bucket 'arn:aws:s3:::a': names 'a'/,
      );
      assert.equal(bucket.input?.name, 'bucket');
      const prefix = refused(
        await checkConnection(deps, { connectionId: id, bucket: 'arn:aws:s3:::only-this', keyPrefix: 'x' }),
        'invalid_key_prefix',
        /^invalid key_prefix 'x': must end with '\/'$/,
      );
      assert.deepEqual(prefix.input, { name: 'keyPrefix', value: 'x', problem: "must end with '/'" });
      refused(
        await checkConnection(deps, { connectionId: id, bucket: 'arn:aws:s3:::other-bucket' }),
        'target_not_allowed',
        new RegExp(`^bucket 'arn:aws:s3:::other-bucket' is not on the allow-list of ${id}$`),
      );
      refused(
        await checkConnection(deps, { connectionId: id, queueUrl: 'https://example.test/queue' }),
        'invalid_message_target',
        /^invalid queue_url: must be/,
      );
      refused(
        await checkConnection(deps, { connectionId: id, eventBusArn: BUS_ARN, detailType: '' }),
        'invalid_message_target',
        /^invalid detail_type: must be 1 to 128 characters/,
      );
      refused(
        await checkConnection(deps, { connectionId: id, queueUrl: QUEUE_URL }),
        'target_not_allowed',
        new RegExp(`^'${QUEUE_ARN}' is not on the allow-list of ${id}$`),
      );
      assert.deepEqual(fake.counts(), { opened: 0, closed: 0 }, 'nothing refused opens the checkers');
    });

    test('a check within the interval is refused with the time to wait', async () => {
      const connection = await connectionWith();
      const fake = fakeCheckers({ waitMs: 42_500 });
      const deps = { ...base, config, openCheckers: fake.open };
      const bucket = refused(
        await checkConnection(deps, { connectionId: connection.id, bucket: 'arn:aws:s3:::any-bucket' }),
        'check_too_soon',
        /ran less than 60 s ago \(checks write a real object\): wait 43 s$/,
      );
      assert.equal(bucket.retryAfterMs, 42_500);
      refused(
        await checkConnection(deps, { connectionId: connection.id, topicArn: TOPIC_ARN }),
        'check_too_soon',
        /\(checks send a real message\): wait 43 s$/,
      );
      assert.deepEqual(fake.counts(), { opened: 2, closed: 2 });
    });
  });
}

describe('checkConnection with the AWS checkers, against an S3 server and an STS endpoint', async () => {
  const [backend] = await backends();
  let db: TestDatabase;
  let rig: ObjectStoreRig;
  let config: Config;
  before(async () => {
    db = await (backend as NonNullable<typeof backend>).create();
    rig = await startObjectStoreRig();
    config = testConfig(rig.config);
  });
  after(async () => {
    await rig.close();
    await db.drop();
  });

  test('writes svc-verify.json, then refuses a second real check within the minute; a role-only probe runs', async () => {
    const deps = { ...depsOf(db.database), config };
    deps.clock.set(Date.now());
    const project = await newProject(deps);
    const connection = await rig.roleConnection(db.database, project.id);
    const bucket = await rig.bucket();
    const checked = value(
      await checkConnection(deps, { connectionId: connection.id, bucket: `arn:aws:s3:::${bucket}`, keyPrefix: 'in/' }),
    );
    assert.equal(checked.report.ok, true, JSON.stringify(checked.report));
    assert.deepEqual(await rig.s3.keys(bucket), ['in/svc-verify.json']);
    const again = refused(
      await checkConnection(deps, { connectionId: connection.id, bucket: `arn:aws:s3:::${bucket}` }),
      'check_too_soon',
    );
    assert.ok((again.retryAfterMs ?? 0) > 0 && (again.retryAfterMs ?? 0) <= 60_000);
    const probe = value(
      await checkConnection(deps, { connectionId: connection.id, bucket: `arn:aws:s3:::${bucket}`, roleOnly: true }),
    );
    assert.equal(probe.kind === 'bucket' && probe.report.key, null);
    assert.equal(probe.report.ok, true);
  });

  test('a check that could not assume the role wrote nothing and does not count against the minute', async () => {
    const deps = { ...depsOf(db.database), config };
    deps.clock.set(Date.now());
    const project = await newProject(deps);
    const connection = await rig.roleConnection(db.database, project.id);
    const bucket = await rig.bucket();
    const check = { connectionId: connection.id, bucket: `arn:aws:s3:::${bucket}` };
    rig.sts.deny(connection.roleArn as string);
    const denied = value(await checkConnection(deps, check));
    assert.equal(denied.report.ok, false);
    assert.equal(denied.report.capabilities.assumeRole.status, 'failed');
    assert.deepEqual(await rig.s3.keys(bucket), []);
    // The same for a message target: the send is never reached.
    const queue = value(await checkConnection(deps, { connectionId: connection.id, queueUrl: QUEUE_URL }));
    assert.equal(queue.kind === 'message' && queue.report.capabilities.assumeRole.status, 'failed');
    assert.equal(
      value(await showConnection(deps, { connectionId: connection.id })).connection.lastCheckAt,
      null,
      'the connection shows no check: none wrote',
    );

    // The trust policy is fixed: the real check runs at once, and that one counts.
    rig.sts.deny(connection.roleArn as string, false);
    const passed = value(await checkConnection(deps, check));
    assert.equal(passed.report.ok, true, JSON.stringify(passed.report));
    assert.deepEqual(await rig.s3.keys(bucket), ['convoy/svc-verify.json']);
    refused(await checkConnection(deps, check), 'check_too_soon');
  });
});
