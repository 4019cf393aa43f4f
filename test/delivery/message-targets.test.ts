/**
 * Delivery to the direct cloud message targets (SQS, SNS, EventBridge) end to end: submit through
 * the HTTP API, run the worker, and look at what reached the emulators of test/helpers/aws-messaging.ts
 * (through the rig's STS endpoint and a role connection). The same tests run for each kind, from
 * the table KINDS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { isoTime, ManualClock } from '../../src/domain/clock.js';
import { DEFAULT_DETAIL_TYPE, INLINE_RESPONSE_MAX_BYTES } from '../../src/domain/message-targets.js';
import { mockRespond } from '../../src/providers/mock/responder.js';
import { deleteConnection } from '../../src/store/admin/connections.js';
import { createRedelivery } from '../../src/store/deliveries/redeliver.js';
import { createProjectWithKey, mockBody, startTestApp, type TestApp, testConfig } from '../helpers/app.js';
import { assertDetail, assertInvalidField } from '../helpers/assertions.js';
import {
  DEFAULT_ACCOUNT,
  type EventBridgeEndpoint,
  type MessageAttribute,
  type SnsEndpoint,
  type SqsEndpoint,
  startEventBridgeEndpoint,
  startSnsEndpoint,
  startSqsEndpoint,
} from '../helpers/aws-messaging.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { notifyTo, type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';
import { testWorker } from '../helpers/pipeline.js';
import { WEBHOOK_PAYLOAD_KEYS } from '../helpers/wire-keys.js';

// ---------------------------------------------------------------------------------------------------
// The three kinds.

interface Emulators {
  sqs: SqsEndpoint;
  sns: SnsEndpoint;
  eventBridge: EventBridgeEndpoint;
}

/** What reached a target, in one shape for the three kinds. */
interface Arrival {
  body: string;
  /** String message attributes (SQS, SNS); null for EventBridge, which has none. */
  attributes: Record<string, string> | null;
  /** EventBridge only. */
  source?: string;
  detailType?: string;
  /** The key the request was signed with. */
  accessKeyId: string;
}

/** A target made for one test: where it is, and how to name it in a callback. */
interface Target {
  arn: string;
  /** The address fields of the `callback` object (without type and connection_id). */
  address: Record<string, string>;
  /** How the incident mail and the attempt detail name it. */
  description: string;
  /** The customer deletes it. */
  remove(): void;
}

interface Kind {
  type: 'sqs' | 'sns' | 'eventbridge';
  action: string;
  /** The service the KMS statement of the session policy names, null: no KMS statement. */
  kmsVia: string | null;
  create(aws: Emulators, name: string): Target;
  arrived(aws: Emulators, arn: string): Arrival[];
  /** The emulator, for deny/throttle and its raw request log. */
  endpoint(aws: Emulators): SqsEndpoint | SnsEndpoint | EventBridgeEndpoint;
  /** The error code the emulator answers when throttling. */
  throttleCode: string;
  /** Address fields that are not well formed, each a 400 naming `field`. */
  malformed: { field: string; values: string[] };
  /** Another target of the same account that exists nowhere (allow-list tests). */
  other(aws: Emulators): { arn: string; address: Record<string, string> };
  /** The longest names AWS allows (standard and FIFO), which submit must take. */
  longest: string[];
}

const stringAttributes = (attributes: Record<string, MessageAttribute>) =>
  Object.fromEntries(Object.entries(attributes).map(([name, a]) => [name, a.StringValue ?? '']));

const KINDS: Kind[] = [
  {
    type: 'sqs',
    action: 'sqs:SendMessage',
    kmsVia: 'sqs',
    create(aws, name) {
      const queue = aws.sqs.createQueue(name);
      return {
        arn: queue.arn,
        address: { queue_url: queue.url },
        description: `SQS queue ${queue.url}`,
        remove: () => aws.sqs.deleteQueue(queue.arn),
      };
    },
    arrived: (aws, arn) =>
      aws.sqs.messages
        .filter((m) => m.queueArn === arn)
        .map((m) => ({ body: m.body, attributes: stringAttributes(m.attributes), accessKeyId: m.accessKeyId })),
    endpoint: (aws) => aws.sqs,
    throttleCode: 'RequestThrottled',
    malformed: {
      field: '/callback/queue_url',
      values: [
        'results',
        'sqs://sqs.us-east-1.amazonaws.com/444455556666/results',
        'https://sqs.us-east-1.amazonaws.com/4444/results',
        'https://sqs.us-east-1.amazonaws.com/444455556666/results?x=1',
        'https://sqs.us-east-1.amazonaws.com/444455556666/bad name',
        'https://sqs.us-east-1.amazonaws.com/444455556666/a/b',
        `https://sqs.us-east-1.amazonaws.com/444455556666/${'q'.repeat(81)}`,
        '',
      ],
    },
    other: (aws) => ({
      arn: `arn:aws:sqs:us-east-1:${DEFAULT_ACCOUNT}:elsewhere`,
      address: { queue_url: `${aws.sqs.url}/${DEFAULT_ACCOUNT}/elsewhere` },
    }),
    // SQS: up to 80 characters, `.fifo` included.
    longest: ['q'.repeat(80), `${'q'.repeat(75)}.fifo`],
  },
  {
    type: 'sns',
    action: 'sns:Publish',
    kmsVia: 'sns',
    create(aws, name) {
      const topic = aws.sns.createTopic(name);
      return {
        arn: topic.arn,
        address: { topic_arn: topic.arn },
        description: `SNS topic ${topic.arn}`,
        remove: () => aws.sns.deleteTopic(topic.arn),
      };
    },
    arrived: (aws, arn) =>
      aws.sns.messages
        .filter((m) => m.topicArn === arn)
        .map((m) => ({ body: m.message, attributes: stringAttributes(m.attributes), accessKeyId: m.accessKeyId })),
    endpoint: (aws) => aws.sns,
    throttleCode: 'Throttling',
    malformed: {
      field: '/callback/topic_arn',
      values: [
        'results',
        `arn:aws:sqs:us-east-1:${DEFAULT_ACCOUNT}:results`,
        'arn:aws:sns:us-east-1:4444:results',
        `arn:aws:sns:us-east-1:${DEFAULT_ACCOUNT}:`,
        `arn:aws:sns:us-east-1:${DEFAULT_ACCOUNT}:bad.name`,
        `arn:aws:sns:nowhere:${DEFAULT_ACCOUNT}:results`,
        '',
      ],
    },
    other: () => {
      const arn = `arn:aws:sns:us-east-1:${DEFAULT_ACCOUNT}:elsewhere`;
      return { arn, address: { topic_arn: arn } };
    },
    // SNS: up to 256 characters, `.fifo` included.
    longest: ['t'.repeat(256), `${'t'.repeat(251)}.fifo`],
  },
  {
    type: 'eventbridge',
    action: 'events:PutEvents',
    kmsVia: null,
    create(aws, name) {
      const bus = aws.eventBridge.createBus(name);
      return {
        arn: bus.arn,
        address: { event_bus_arn: bus.arn },
        description: `EventBridge event bus ${bus.arn}`,
        remove: () => aws.eventBridge.deleteBus(bus.arn),
      };
    },
    arrived: (aws, arn) =>
      aws.eventBridge.events
        .filter((e) => e.busArn === arn)
        .map((e) => ({
          body: e.detail,
          attributes: null,
          source: e.source,
          detailType: e.detailType,
          accessKeyId: e.accessKeyId,
        })),
    endpoint: (aws) => aws.eventBridge,
    throttleCode: 'ThrottlingException',
    malformed: {
      field: '/callback/event_bus_arn',
      values: [
        'default',
        `arn:aws:events:us-east-1:${DEFAULT_ACCOUNT}:rule/results`,
        `arn:aws:events:us-east-1:${DEFAULT_ACCOUNT}:event-bus/`,
        `arn:aws:sns:us-east-1:${DEFAULT_ACCOUNT}:event-bus/results`,
        'arn:aws:events:us-east-1:4444:event-bus/results',
        '',
      ],
    },
    other: () => {
      const arn = `arn:aws:events:us-east-1:${DEFAULT_ACCOUNT}:event-bus/elsewhere`;
      return { arn, address: { event_bus_arn: arn } };
    },
    // EventBridge: bus names up to 256 characters.
    longest: ['b'.repeat(256)],
  },
];

// ---------------------------------------------------------------------------------------------------
// Responses of an exact size.

const responseBytes = (prompt: string) => {
  const outcome = mockRespond(
    'svc-mock',
    JSON.stringify({ max_tokens: 1024, messages: [{ role: 'user', content: prompt }] }),
  );
  assert.ok(outcome.success);
  return Buffer.byteLength(JSON.stringify(outcome.response), 'utf8');
};

const exactPrompts = new Map<number, string>();

/**
 * A prompt whose svc-mock response is exactly `bytes` bytes of JSON. The response echoes the prompt
 * (one word here, so max_tokens never cuts it) plus 12 to 35 filler words picked by a digest of the
 * input, so the size is searched for; the tests then check it on the stored result.
 */
function promptWithResponseOf(bytes: number): string {
  const known = exactPrompts.get(bytes);
  if (known) return known;
  for (let variant = 0; variant < 100; variant++) {
    // The response is the prompt plus about 300 to 500 bytes.
    for (let n = bytes - 560; n < bytes - 260; n++) {
      const prompt = `v${variant}-${'x'.repeat(n)}`;
      if (responseBytes(prompt) === bytes) {
        exactPrompts.set(bytes, prompt);
        return prompt;
      }
    }
  }
  throw new Error(`no prompt found with a ${bytes}-byte response`);
}

// ---------------------------------------------------------------------------------------------------

const RESULT_URL = (id: string) => `https://barge.test/cargo/${id}/result`;
/** A message target's body: the webhook's, and where the result can be fetched. */
const BODY_KEYS = [...WEBHOOK_PAYLOAD_KEYS, 'result_url'];
let counter = 0;

for (const backend of await backends()) {
  describe(`message targets on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let rig: ObjectStoreRig;
    let aws: Emulators;
    let config: Partial<Config>;
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));

    before(async () => {
      db = await backend.create();
      rig = await startObjectStoreRig();
      aws = {
        sqs: await startSqsEndpoint(),
        sns: await startSnsEndpoint(),
        // Real EventBridge accepts (and drops) events for a bus that does not exist; this one says
        // so, which is how a deleted bus is seen as target_not_found here.
        eventBridge: await startEventBridgeEndpoint({ unknownBus: 'not-found' }),
      };
      config = {
        ...rig.config,
        awsEndpoints: { sqs: aws.sqs.url, sns: aws.sns.url, eventBridge: aws.eventBridge.url },
      };
      app = await startTestApp(db.database, { clock, config });
    });
    after(async () => {
      await app.close();
      await Promise.all([aws.sqs.close(), aws.sns.close(), aws.eventBridge.close()]);
      await rig.close();
      await db.drop();
    });

    /**
     * A project with a key, a role connection and a fresh target of the kind; a worker over the
     * rig (retry delays shortened when asked).
     */
    const setup = async (kind: Kind, options: { retryDelaysMs?: number[]; allow?: boolean } = {}) => {
      const project = await createProjectWithKey(db.database);
      const target = kind.create(aws, `${kind.type}-${process.pid}-${++counter}`);
      const connection = await rig.roleConnection(db.database, project.projectId, {
        ...(options.allow ? { allow: [target.arn] } : {}),
      });
      const workerConfig: Partial<Config> = options.retryDelaysMs
        ? { ...config, delivery: { ...testConfig().delivery, retryDelaysMs: options.retryDelaysMs } }
        : config;
      const { worker } = await testWorker(db.database, clock, { latencyMs: 0, config: workerConfig });
      const callback = (extra: Record<string, unknown> = {}, connectionId = connection.id) => ({
        callback: { type: kind.type, connection_id: connectionId, ...target.address, ...extra },
      });
      const run = async (ms = 500) => {
        clock.advance(ms);
        await worker.runUntilIdle();
      };
      return { ...project, target, connection, worker, callback, run };
    };
    const load = async (key: string, body: unknown) => {
      const res = await app.request('POST', '/cargo/load', { key, body });
      assert.equal(res.status, 200, res.text);
      return res.body.cargo_id as string;
    };
    const tracking = async (key: string, id: string) =>
      (await app.request('GET', `/cargo/${id}/tracking`, { key })).body;
    const mailbox = async (key: string, id: string) => {
      const res = await app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(res.status, 200, res.text);
      return res;
    };
    const storedResponse = async (id: string) =>
      (
        await db.database.write
          .selectFrom('results')
          .select('response')
          .where('cargo_id', '=', id)
          .executeTakeFirstOrThrow()
      ).response;
    const attemptRows = (cargoId: string) =>
      db.database.write
        .selectFrom('delivery_attempts as a')
        .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
        .select(['a.attempt', 'a.started_at', 'a.error_class', 'a.error_detail', 'd.channel'])
        .where('d.cargo_id', '=', cargoId)
        .orderBy('a.started_at')
        .orderBy('a.attempt')
        .execute();
    const connectionRow = (id: string) =>
      db.database.write.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const cargoCount = async (projectId: string) =>
      (await db.database.write.selectFrom('cargo').select('id').where('project_id', '=', projectId).execute()).length;
    /** What arrived for one cargo (by the cargo id in the body). */
    const arrivedFor = (kind: Kind, arn: string, id: string) =>
      kind.arrived(aws, arn).filter((a) => JSON.parse(a.body).cargo_id === id);

    for (const kind of KINDS) {
      describe(`${kind.type}`, () => {
        test('a completed cargo arrives once: the webhook payload plus result_url, in that order, with the attributes', async () => {
          const { key, target, callback, run } = await setup(kind);
          const metadata = { order: 'B-7', n: 1, nested: { ok: true } };
          const id = await load(key, mockBody('deliver me', { ...callback(), metadata }));
          await run();

          const arrived = kind.arrived(aws, target.arn);
          assert.equal(arrived.length, 1);
          const [message] = arrived as [Arrival];
          const result = await mailbox(key, id);
          const response = await storedResponse(id);
          assert.ok(response);
          assert.deepEqual(JSON.parse(response), result.body.response);
          // The exact bytes: the stored response and metadata texts, in the documented key order.
          assert.equal(
            message.body,
            `{"cargo_id":"${id}","success":true,"response":${response},"error":null,"error_message":null` +
              `,"metadata":${JSON.stringify(metadata)},"result_url":"${RESULT_URL(id)}"}`,
          );
          const body = JSON.parse(message.body);
          assert.deepEqual(Object.keys(body), BODY_KEYS);
          assert.deepEqual(body, {
            cargo_id: id,
            success: true,
            response: result.body.response,
            error: null,
            error_message: null,
            metadata,
            result_url: RESULT_URL(id),
          });
          if (kind.type === 'eventbridge') {
            assert.equal(message.source, 'barge');
            assert.equal(message.detailType, DEFAULT_DETAIL_TYPE);
            assert.equal(message.detailType, 'barge.cargo.finished');
          } else {
            assert.deepEqual(message.attributes, { 'svc-cargo-id': id, 'svc-success': 'true' });
          }

          const track = await tracking(key, id);
          assert.equal(track.status, 'callback_delivered');
          assert.deepEqual(track.deliveries, [
            {
              channel: kind.type,
              status: 'delivered',
              attempts: 1,
              last_error: null,
              last_status_code: 200,
              next_attempt_at: null,
            },
          ]);
        });

        test('a failed cargo arrives with success false, response null and the error twice', async () => {
          const { key, target, callback, run } = await setup(kind);
          const id = await load(key, mockBody('please svc-mock:fail', callback()));
          await run();
          const arrived = kind.arrived(aws, target.arn);
          assert.equal(arrived.length, 1);
          const [message] = arrived as [Arrival];
          const result = await mailbox(key, id);
          assert.equal(result.body.success, false);
          const error = result.body.error_message;
          assert.match(error, /svc-mock was asked to fail/);
          const body = JSON.parse(message.body);
          assert.deepEqual(Object.keys(body), BODY_KEYS);
          assert.deepEqual(body, {
            cargo_id: id,
            success: false,
            response: null,
            error,
            error_message: error,
            metadata: null,
            result_url: RESULT_URL(id),
          });
          if (kind.type !== 'eventbridge') {
            assert.deepEqual(message.attributes, { 'svc-cargo-id': id, 'svc-success': 'false' });
          }
          assert.equal((await tracking(key, id)).status, 'callback_delivered');
        });

        if (kind.type === 'eventbridge') {
          test('a custom detail type is used as given; source stays barge', async () => {
            const { key, target, callback, run } = await setup(kind);
            const id = await load(key, mockBody('custom type', callback({ detail_type: 'Order Result: v2' })));
            await run();
            const [event, ...more] = kind.arrived(aws, target.arn);
            assert.equal(more.length, 0);
            assert.equal(event?.detailType, 'Order Result: v2');
            assert.equal(event?.source, 'barge');
            assert.equal(JSON.parse(event?.body ?? '{}').cargo_id, id);
          });
        }

        test(`a response of exactly ${INLINE_RESPONSE_MAX_BYTES} bytes is inlined; one byte more is left out and flagged oversize`, async () => {
          const { key, target, callback, run } = await setup(kind);
          const inline = await load(key, mockBody(promptWithResponseOf(240_000), callback()));
          const oversize = await load(key, mockBody(promptWithResponseOf(240_001), callback()));
          await run();

          // The test's own assumption, checked on the stored result.
          const inlineText = await storedResponse(inline);
          const oversizeText = await storedResponse(oversize);
          assert.equal(Buffer.byteLength(inlineText ?? '', 'utf8'), 240_000);
          assert.equal(Buffer.byteLength(oversizeText ?? '', 'utf8'), 240_001);

          const inlined = arrivedFor(kind, target.arn, inline);
          assert.equal(inlined.length, 1);
          const inlinedBody = JSON.parse(inlined[0]?.body ?? '');
          assert.deepEqual(Object.keys(inlinedBody), BODY_KEYS, 'no oversize key');
          assert.equal(inlined[0]?.body.includes(`"response":${inlineText},`), true);
          assert.deepEqual(inlinedBody.response, (await mailbox(key, inline)).body.response);

          const left = arrivedFor(kind, target.arn, oversize);
          assert.equal(left.length, 1);
          assert.equal(
            left[0]?.body,
            `{"cargo_id":"${oversize}","success":true,"response":null,"error":null,"error_message":null` +
              `,"metadata":null,"result_url":"${RESULT_URL(oversize)}","oversize":true}`,
          );
          // And the full result is where result_url says.
          const full = await mailbox(key, oversize);
          assert.equal(Buffer.byteLength(JSON.stringify(full.body.response), 'utf8'), 240_001);
          for (const id of [inline, oversize]) assert.equal((await tracking(key, id)).status, 'callback_delivered');
        });

        test(`the delivery session may do exactly ${kind.action} on the target, with the connection's external id`, async () => {
          const { key, target, connection, callback, run } = await setup(kind);
          const id = await load(key, mockBody('policy', callback()));
          await run();
          const calls = rig.sts.calls.filter((c) => c.roleArn === connection.roleArn);
          assert.equal(calls.length, 1);
          const [call] = calls;
          assert.equal(call?.answer, 'credentials');
          assert.equal(call?.externalId, connection.externalId);
          assert.equal(call?.sessionName, `barge-${connection.id}`);
          const policy = JSON.parse(call?.policy ?? '{}');
          assert.equal(policy.Version, '2012-10-17');
          assert.deepEqual(policy.Statement, [
            { Sid: 'SendResultMessages', Effect: 'Allow', Action: kind.action, Resource: target.arn },
            ...(kind.kmsVia === null
              ? []
              : [
                  {
                    Sid: 'EncryptThroughService',
                    Effect: 'Allow',
                    Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
                    Resource: '*',
                    Condition: { StringLike: { 'kms:ViaService': `${kind.kmsVia}.*.amazonaws.com` } },
                  },
                ]),
          ]);
          // The message was sent with that session's credentials.
          const [message] = arrivedFor(kind, target.arn, id);
          assert.equal(message?.accessKeyId, call?.credentials?.accessKeyId);
        });

        test('submit rules: 400 naming the field, 422 connection_not_found and target_not_allowed; nothing stored for a refusal', async () => {
          const { key, projectId, target, connection, callback } = await setup(kind, { allow: true });
          const submit = (extra: Record<string, unknown>, connectionId?: string) =>
            app.request('POST', '/cargo/load', { key, body: mockBody('rules', callback(extra, connectionId)) });
          const addressField = kind.malformed.field.slice('/callback/'.length);

          for (const value of kind.malformed.values) {
            assertInvalidField(await submit({ [addressField]: value }), kind.malformed.field);
          }
          if (kind.type === 'eventbridge') {
            for (const detailType of ['', 'x'.repeat(129), 'line\nbreak', 'nul\u0000']) {
              assertInvalidField(await submit({ detail_type: detailType }), '/callback/detail_type');
            }
            const longest = await submit({ detail_type: 'x'.repeat(128) });
            assert.equal(longest.status, 200, longest.text);
          }
          // A missing required field, each named.
          for (const field of [addressField, 'connection_id']) {
            const { callback: full } = callback();
            const partial: Record<string, unknown> = { ...full };
            delete partial[field];
            const body = mockBody('rules', { callback: partial });
            assertInvalidField(await app.request('POST', '/cargo/load', { key, body }), `/callback/${field}`);
          }
          // A field of another kind, and an unknown type.
          assertInvalidField(await submit({ key_prefix: 'convoy/' }), '/callback/key_prefix');
          assertInvalidField(
            await app.request('POST', '/cargo/load', {
              key,
              body: mockBody('rules', { callback: { ...callback().callback, type: 'kinesis' } }),
            }),
            '/callback/type',
          );

          // Connections that are not this project's, however they fail to be.
          const other = await createProjectWithKey(db.database);
          const theirs = await rig.roleConnection(db.database, other.projectId);
          const unknownId = `conn_${'0'.repeat(26)}`;
          for (const connectionId of [unknownId, theirs.id, 'c\u0000', 'conn_nope', connection.id.toUpperCase()]) {
            assertDetail(await submit({}, connectionId), 422, {
              error: 'connection_not_found',
              message: `No connection '${connectionId}' in this project.`,
            });
          }

          // The allow-list names the target: another one is refused, the listed one accepted.
          const elsewhere = kind.other(aws);
          assertDetail(await submit(elsewhere.address), 422, {
            error: 'target_not_allowed',
            message: `Target '${elsewhere.arn}' is not on the allow-list of connection '${connection.id}'.`,
          });
          const accepted = await submit({});
          assert.equal(accepted.status, 200, accepted.text);

          // Only the accepted cargo were stored (the 128-character detail type and this one).
          assert.equal(await cargoCount(projectId), kind.type === 'eventbridge' ? 2 : 1);
          const stored = await db.database.write
            .selectFrom('cargo')
            .select('callback')
            .where('id', '=', accepted.body.cargo_id)
            .executeTakeFirstOrThrow();
          assert.deepEqual(JSON.parse(stored.callback ?? 'null'), {
            type: kind.type,
            connection_id: connection.id,
            ...target.address,
            ...(kind.type === 'eventbridge' ? { detail_type: DEFAULT_DETAIL_TYPE } : {}),
          });
        });

        test('the longest names AWS allows are accepted at submit', async () => {
          const { key, callback } = await setup(kind);
          for (const name of kind.longest) {
            // Created, so that what a later worker delivers arrives.
            const { address } = kind.create(aws, name);
            const res = await app.request('POST', '/cargo/load', { key, body: mockBody('long', callback(address)) });
            assert.equal(res.status, 200, `${name.length} characters: ${res.text}`);
          }
        });

        test('access denied by the target: assume_role_denied, the connection failed, one incident mail, callback_failed; a later success ends the incident', async () => {
          const { key, slug, target, connection, callback, run } = await setup(kind, { retryDelaysMs: [1000, 1000] });
          const address = `ops-${kind.type}-${counter}@customer.test`;
          await notifyTo(db.database, slug, address);
          const mails = () => rig.smtp.messages.filter((m) => m.to.includes(address));
          kind.endpoint(aws).deny(target.arn);

          const first = await load(key, mockBody('denied one', callback()));
          const second = await load(key, mockBody('denied two', callback()));
          await run();
          for (const id of [first, second]) {
            const track = await tracking(key, id);
            assert.equal(track.status, 'callback_pending');
            assert.match(track.deliveries[0].last_error, new RegExp(`^assume_role_denied: ${kind.action} was denied`));
            assert.equal(track.deliveries[0].next_attempt_at, isoTime(clock.now() + 1000));
          }
          const failed = await connectionRow(connection.id);
          assert.equal(failed.status, 'failed');
          assert.match(failed.last_failure_reason ?? '', /^assume_role_denied: /);

          // The retries fail the same way, and the schedule runs out.
          await run(1000);
          await run(1000);
          for (const id of [first, second]) {
            const track = await tracking(key, id);
            assert.equal(track.status, 'callback_failed');
            assert.equal(track.deliveries[0].status, 'failed');
            assert.equal(track.deliveries[0].attempts, 3);
            assert.deepEqual(
              (await attemptRows(id)).map((a) => a.error_class),
              ['assume_role_denied', 'assume_role_denied', 'assume_role_denied'],
            );
          }
          assert.equal(kind.arrived(aws, target.arn).length, 0);

          // Six denied attempts, one incident, one mail naming the connection and the target.
          assert.equal(mails().length, 1);
          const [mail] = mails();
          assert.match(mail?.headers.subject ?? '', new RegExp(`connection ${connection.id} failed`));
          assert.ok(mail?.text.includes(`Target: ${target.description}`), mail?.text);
          assert.ok(mail?.text.includes(`${kind.action} on ${target.arn}`), mail?.text);
          assert.ok(mail?.text.includes(connection.externalId), mail?.text);
          assert.ok(mail?.text.includes(`project '${slug}'`), mail?.text);

          // Fixed by the customer: a redelivery goes through and ends the incident.
          kind.endpoint(aws).deny(target.arn, false);
          const redelivery = await createRedelivery(db.database, first, clock.now());
          assert.deepEqual(redelivery, { channels: [kind.type] });
          await run();
          assert.equal((await tracking(key, first)).status, 'callback_delivered');
          assert.equal(arrivedFor(kind, target.arn, first).length, 1);
          assert.equal((await connectionRow(connection.id)).status, 'active');
          assert.equal(mails().length, 1, 'no mail for the end of an incident');
        });

        test('AssumeRole denied by STS is assume_role_denied as well; a new cargo after the fix ends the incident', async () => {
          const { key, slug, target, connection, callback, run } = await setup(kind);
          const address = `sts-${kind.type}-${counter}@customer.test`;
          await notifyTo(db.database, slug, address);
          rig.sts.deny(connection.roleArn as string);
          const id = await load(key, mockBody('sts says no', callback()));
          await run();
          const track = await tracking(key, id);
          assert.match(
            track.deliveries[0].last_error,
            new RegExp(
              `^assume_role_denied: AssumeRole of ${connection.roleArn} was denied: AccessDenied \\(HTTP 403\\)`,
            ),
          );
          assert.equal(track.deliveries[0].last_status_code, 403);
          assert.equal((await connectionRow(connection.id)).status, 'failed');
          assert.equal(rig.smtp.messages.filter((m) => m.to.includes(address)).length, 1);
          assert.equal(kind.endpoint(aws).requests.filter((r) => r.body.includes(id)).length, 0, 'nothing was sent');

          rig.sts.deny(connection.roleArn as string, false);
          const later = await load(key, mockBody('sts says yes', callback()));
          await run();
          assert.equal((await tracking(key, later)).status, 'callback_delivered');
          assert.equal((await connectionRow(connection.id)).status, 'active');
          // The first cargo's retry (30 s later) is delivered too.
          await run(30_000);
          assert.equal((await tracking(key, id)).status, 'callback_delivered');
          assert.equal(kind.arrived(aws, target.arn).length, 2);
        });

        test('a connection deleted after submit fails the delivery at once: one connection_not_found attempt, no retry', async () => {
          const { key, target, connection, callback, run } = await setup(kind);
          const id = await load(key, mockBody('orphan', callback()));
          assert.equal(await deleteConnection(db.database, connection.id, clock.now()), true);
          await run();
          const track = await tracking(key, id);
          assert.equal(track.status, 'callback_failed');
          assert.equal(track.status_description, 'Delivery failed: the connection was deleted');
          assert.equal(track.deliveries[0].status, 'failed');
          assert.equal(track.deliveries[0].attempts, 1);
          assert.equal(track.deliveries[0].next_attempt_at, null);
          assert.match(
            track.deliveries[0].last_error,
            new RegExp(`^connection_not_found: connection ${connection.id} no longer exists`),
          );
          const rows = await attemptRows(id);
          assert.deepEqual(
            rows.map((r) => [r.channel, r.error_class]),
            [[kind.type, 'connection_not_found']],
          );
          // Nothing comes later either.
          await run(3_600_000);
          assert.equal((await attemptRows(id)).length, 1);
          assert.equal(kind.arrived(aws, target.arn).length, 0);
          assert.equal(rig.sts.calls.filter((c) => c.roleArn === connection.roleArn).length, 0);
        });

        test('throttling is absorbed within the attempt: delivered on the first customer-visible attempt', async () => {
          const { key, target, callback, run } = await setup(kind);
          const endpoint = kind.endpoint(aws);
          const id = await load(key, mockBody('throttled', callback()));
          endpoint.throttle(2);
          await run();
          const sends = endpoint.requests.filter((r) => r.body.includes(id));
          assert.deepEqual(
            sends.map((r) => r.errorCode),
            [kind.throttleCode, kind.throttleCode, null],
          );
          assert.equal(arrivedFor(kind, target.arn, id).length, 1);
          const track = await tracking(key, id);
          assert.equal(track.status, 'callback_delivered');
          assert.equal(track.deliveries[0].attempts, 1);
          assert.equal((await attemptRows(id)).length, 1);
        });

        if (kind.type === 'sqs') {
          test('a response or metadata with U+FFFE/U+FFFF (valid JSON, refused raw by SQS) still arrives', async () => {
            // No retries: a failure here is final and leaves nothing pending for later tests.
            const { key, target, callback, run } = await setup(kind, { retryDelaysMs: [] });
            const metadata = { note: 'a\ufffeb' };
            const id = await load(key, mockBody('odd \uffff character', { ...callback(), metadata }));
            await run();
            const track = await tracking(key, id);
            assert.equal(track.status, 'callback_delivered', track.deliveries[0].last_error);
            const [message] = arrivedFor(kind, target.arn, id);
            const body = JSON.parse(message?.body ?? '{}');
            assert.deepEqual(body.response, (await mailbox(key, id)).body.response);
            assert.deepEqual(body.metadata, metadata);
          });
        }

        test('a target deleted after submit: target_not_found, retried on the schedule, then callback_failed', async () => {
          const { key, target, connection, callback, run } = await setup(kind);
          const id = await load(key, mockBody('nowhere', callback()));
          target.remove();
          await run();
          let track = await tracking(key, id);
          assert.match(track.deliveries[0].last_error, /^target_not_found: the target does not exist: /);
          assert.ok(track.deliveries[0].last_error.includes(target.description), track.deliveries[0].last_error);
          // The default schedule: 30 s, 2 min, 10 min, 30 min, 1 h from each attempt's start.
          for (const delay of [30_000, 120_000, 600_000, 1_800_000, 3_600_000]) {
            const [last] = (await attemptRows(id)).slice(-1);
            track = await tracking(key, id);
            assert.equal(track.status, 'callback_pending');
            assert.equal(track.deliveries[0].next_attempt_at, isoTime((last?.started_at ?? 0) + delay));
            await run(delay);
          }
          track = await tracking(key, id);
          assert.equal(track.status, 'callback_failed');
          assert.equal(track.deliveries[0].attempts, 6);
          assert.deepEqual(
            (await attemptRows(id)).map((r) => r.error_class),
            Array(6).fill('target_not_found'),
          );
          assert.equal((await connectionRow(connection.id)).status, 'active', 'a missing target is no access incident');
          assert.equal((await mailbox(key, id)).body.success, true, 'the result stays in the mailbox');
        });
      });
    }
  });
}
