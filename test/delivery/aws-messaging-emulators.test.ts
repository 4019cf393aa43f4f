/**
 * Self-test of the SQS, SNS and EventBridge emulators (test/helpers/aws-messaging.ts): the official AWS SDK v3
 * clients, pointed at them, succeed, fail with the named exceptions the real services give, and sign with key
 * pairs the emulators verify (including temporary credentials handed out by the test STS endpoint).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AccessDeniedException,
  EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
  ResourceNotFoundException,
  ThrottlingException,
} from '@aws-sdk/client-eventbridge';
import {
  AuthorizationErrorException,
  InvalidParameterException,
  NotFoundException,
  PublishCommand,
  SNSClient,
} from '@aws-sdk/client-sns';
import {
  GetQueueUrlCommand,
  InvalidAddress,
  QueueDoesNotExist,
  RequestThrottled,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import {
  DEFAULT_ACCOUNT,
  type EventBridgeEndpoint,
  forgetMessagingKeyPair,
  MAX_MESSAGE_BYTES,
  md5OfMessageAttributes,
  putEventsEntrySize,
  registerMessagingKeyPair,
  type SnsEndpoint,
  type SqsEndpoint,
  startEventBridgeEndpoint,
  startSnsEndpoint,
  startSqsEndpoint,
} from '../helpers/aws-messaging.js';
import { registerKeyPair, SERVICE_CREDENTIALS } from '../helpers/s3-server.js';
import { startStsEndpoint } from '../helpers/sts-endpoint.js';

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const clientConfig = (endpoint: string, credentials: Credentials = SERVICE_CREDENTIALS, maxAttempts = 1) => ({
  region: 'us-east-1',
  endpoint,
  credentials,
  maxAttempts,
});

/** Awaits a rejection and hands back the error for more checks. */
async function rejection(promise: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  assert.fail('expected the call to fail');
}

const WRONG_SECRET = { accessKeyId: SERVICE_CREDENTIALS.accessKeyId, secretAccessKey: 'not-the-secret' };
const UNKNOWN_KEY = { accessKeyId: 'AKIAUNKNOWN000000000', secretAccessKey: 'whatever' };
/** Awkward text: non-ASCII, form and JSON metacharacters, an astral code point. */
const AWKWARD = 'héllo + wörld & a=b "quoted" \\ <xml/> 🚢 \n\t end';

describe('SQS emulator', () => {
  let sqs: SqsEndpoint;
  let client: SQSClient;
  let queue: { url: string; arn: string };
  before(async () => {
    sqs = await startSqsEndpoint();
    client = new SQSClient(clientConfig(sqs.url));
    queue = sqs.createQueue('deliveries');
  });
  after(async () => {
    client.destroy();
    await sqs.close();
  });

  test('a send succeeds, is answered with the right MD5s and is recorded byte-exact', async () => {
    const attributes = {
      kind: { DataType: 'String', StringValue: 'cargo.delivered' },
      count: { DataType: 'Number', StringValue: '42' },
      blob: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 255]) },
    };
    const out = await client.send(
      new SendMessageCommand({ QueueUrl: queue.url, MessageBody: AWKWARD, MessageAttributes: attributes }),
    );
    const recorded = sqs.messages.at(-1);
    assert.ok(recorded);
    assert.equal(recorded.body, AWKWARD);
    assert.equal(recorded.queueUrl, queue.url);
    assert.equal(recorded.queueArn, `arn:aws:sqs:us-east-1:${DEFAULT_ACCOUNT}:deliveries`);
    assert.deepEqual(recorded.attributes, attributes);
    assert.equal(recorded.accessKeyId, SERVICE_CREDENTIALS.accessKeyId);
    assert.equal(out.MessageId, recorded.messageId);
    assert.equal(out.MD5OfMessageAttributes, md5OfMessageAttributes(attributes));
    const raw = sqs.requests.at(-1);
    assert.equal(raw?.operation, 'AmazonSQS.SendMessage');
    assert.equal(raw?.headers['x-amzn-query-mode'], 'true');
    assert.equal(raw?.accessKeyId, SERVICE_CREDENTIALS.accessKeyId);
    assert.equal(raw?.status, 200);
  });

  test('MD5OfMessageAttributes matches a value computed by another implementation', () => {
    const attributes = {
      Hello: { DataType: 'String', StringValue: 'There' },
      General: { DataType: 'String', StringValue: 'Kenobi' },
    };
    assert.equal(md5OfMessageAttributes(attributes), 'fca026605781cb4126a1e9044df24232');
  });

  test('GetQueueUrl finds a queue by name', async () => {
    const out = await client.send(new GetQueueUrlCommand({ QueueName: 'deliveries' }));
    assert.equal(out.QueueUrl, queue.url);
  });

  test('an unknown queue is QueueDoesNotExist; a malformed QueueUrl is InvalidAddress', async () => {
    const missing = await rejection(
      client.send(new SendMessageCommand({ QueueUrl: `${sqs.url}/${DEFAULT_ACCOUNT}/nope`, MessageBody: 'x' })),
    );
    assert.ok(missing instanceof QueueDoesNotExist, `${missing.name}: ${missing.message}`);
    assert.equal(missing.$metadata?.httpStatusCode, 400);
    const malformed = await rejection(
      client.send(new SendMessageCommand({ QueueUrl: `${sqs.url}/not-a-queue-url`, MessageBody: 'x' })),
    );
    assert.ok(malformed instanceof InvalidAddress, `${malformed.name}: ${malformed.message}`);
  });

  test('deny and allowOnly answer AccessDenied', async () => {
    sqs.deny(queue.arn);
    const denied = await rejection(client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })));
    sqs.deny(queue.arn, false);
    assert.equal(denied.name, 'AccessDenied');
    assert.equal(denied.$metadata?.httpStatusCode, 403);

    const other = sqs.createQueue('other');
    sqs.allowOnly(SERVICE_CREDENTIALS.accessKeyId, [other.arn]);
    const limited = await rejection(client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })));
    await client.send(new SendMessageCommand({ QueueUrl: other.url, MessageBody: 'x' }));
    sqs.allowOnly(SERVICE_CREDENTIALS.accessKeyId, null);
    assert.equal(limited.name, 'AccessDenied');
  });

  test('throttle answers RequestThrottled, which the SDK retries', async () => {
    sqs.throttle(1);
    const throttled = await rejection(client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })));
    assert.ok(throttled instanceof RequestThrottled, `${throttled.name}: ${throttled.message}`);

    const retrying = new SQSClient(clientConfig(sqs.url, SERVICE_CREDENTIALS, 2));
    sqs.throttle(1);
    const before = sqs.requests.length;
    await retrying.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'after a retry' }));
    retrying.destroy();
    assert.equal(sqs.requests.length - before, 2);
    assert.equal(sqs.messages.at(-1)?.body, 'after a retry');
  });

  test('a body of exactly 262,144 bytes is accepted, one byte more is InvalidParameterValue', async () => {
    const limit = 'é'.repeat(MAX_MESSAGE_BYTES / 2);
    await client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: limit }));
    assert.equal(sqs.messages.at(-1)?.body, limit);
    const tooLarge = await rejection(
      client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: `${limit}x` })),
    );
    assert.equal(tooLarge.name, 'InvalidParameterValue');
    assert.equal(
      tooLarge.message,
      'One or more parameters are invalid. Reason: Message must be shorter than 262144 bytes.',
    );
    // Attribute names, types and values count towards the limit: 1 + 6 + 2 bytes here.
    const attributes = { a: { DataType: 'String', StringValue: 'xx' } };
    const body = 'b'.repeat(MAX_MESSAGE_BYTES - 9);
    await client.send(
      new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body, MessageAttributes: attributes }),
    );
    const withAttribute = await rejection(
      client.send(
        new SendMessageCommand({ QueueUrl: queue.url, MessageBody: `${body}b`, MessageAttributes: attributes }),
      ),
    );
    assert.equal(withAttribute.name, 'InvalidParameterValue');
  });

  test('a wrong secret is SignatureDoesNotMatch, an unknown key InvalidClientTokenId', async () => {
    const wrong = new SQSClient(clientConfig(sqs.url, WRONG_SECRET));
    const unknown = new SQSClient(clientConfig(sqs.url, UNKNOWN_KEY));
    const badSignature = await rejection(wrong.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })));
    const badKey = await rejection(unknown.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })));
    wrong.destroy();
    unknown.destroy();
    assert.equal(badSignature.name, 'SignatureDoesNotMatch');
    assert.equal(badSignature.$metadata?.httpStatusCode, 403);
    assert.equal(badKey.name, 'InvalidClientTokenId');
    assert.equal(badKey.$metadata?.httpStatusCode, 403);
  });

  test('temporary credentials registered through registerKeyPair work, only with their session token', async () => {
    const temporary = {
      accessKeyId: 'ASIATEMPORARYSQS0001',
      secretAccessKey: 'temporary-secret',
      sessionToken: 'the-session-token',
    };
    registerKeyPair(temporary.accessKeyId, temporary.secretAccessKey, temporary.sessionToken);
    const withToken = new SQSClient(clientConfig(sqs.url, temporary));
    const withoutToken = new SQSClient(
      clientConfig(sqs.url, { accessKeyId: temporary.accessKeyId, secretAccessKey: temporary.secretAccessKey }),
    );
    await withToken.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'temporary' }));
    const noToken = await rejection(
      withoutToken.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })),
    );
    forgetMessagingKeyPair(temporary.accessKeyId);
    const forgotten = await rejection(
      withToken.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })),
    );
    withToken.destroy();
    withoutToken.destroy();
    assert.equal(sqs.messages.at(-1)?.accessKeyId, temporary.accessKeyId);
    assert.equal(sqs.requests.find((r) => r.accessKeyId === temporary.accessKeyId)?.sessionToken, 'the-session-token');
    assert.equal(noToken.name, 'InvalidClientTokenId');
    assert.equal(forgotten.name, 'InvalidClientTokenId');
  });
});

describe('SNS emulator', () => {
  let sns: SnsEndpoint;
  let client: SNSClient;
  let topic: { arn: string };
  before(async () => {
    sns = await startSnsEndpoint();
    client = new SNSClient(clientConfig(sns.url));
    topic = sns.createTopic('deliveries');
  });
  after(async () => {
    client.destroy();
    await sns.close();
  });

  test('a publish succeeds and is recorded byte-exact', async () => {
    const attributes = {
      kind: { DataType: 'String', StringValue: 'cargo.delivered' },
      blob: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 255]) },
    };
    const out = await client.send(
      new PublishCommand({
        TopicArn: topic.arn,
        Message: AWKWARD,
        Subject: 'Cargo delivered',
        MessageAttributes: attributes,
      }),
    );
    const recorded = sns.messages.at(-1);
    assert.ok(recorded);
    assert.equal(recorded.topicArn, `arn:aws:sns:us-east-1:${DEFAULT_ACCOUNT}:deliveries`);
    assert.equal(recorded.message, AWKWARD);
    assert.equal(recorded.subject, 'Cargo delivered');
    assert.deepEqual(recorded.attributes, attributes);
    assert.equal(recorded.accessKeyId, SERVICE_CREDENTIALS.accessKeyId);
    assert.equal(out.MessageId, recorded.messageId);
    assert.equal(sns.requests.at(-1)?.operation, 'Publish');
  });

  test('an unknown topic is NotFoundException', async () => {
    const error = await rejection(
      client.send(new PublishCommand({ TopicArn: `arn:aws:sns:us-east-1:${DEFAULT_ACCOUNT}:nope`, Message: 'x' })),
    );
    assert.ok(error instanceof NotFoundException, `${error.name}: ${error.message}`);
    assert.equal(error.$metadata?.httpStatusCode, 404);
  });

  test('deny and allowOnly answer AuthorizationErrorException', async () => {
    sns.deny(topic.arn);
    const denied = await rejection(client.send(new PublishCommand({ TopicArn: topic.arn, Message: 'x' })));
    sns.deny(topic.arn, false);
    assert.ok(denied instanceof AuthorizationErrorException, `${denied.name}: ${denied.message}`);
    sns.allowOnly(SERVICE_CREDENTIALS.accessKeyId, []);
    const limited = await rejection(client.send(new PublishCommand({ TopicArn: topic.arn, Message: 'x' })));
    sns.allowOnly(SERVICE_CREDENTIALS.accessKeyId, null);
    assert.ok(limited instanceof AuthorizationErrorException);
  });

  test('throttle answers Throttling, which the SDK retries', async () => {
    sns.throttle(1);
    const throttled = await rejection(client.send(new PublishCommand({ TopicArn: topic.arn, Message: 'x' })));
    assert.equal(throttled.name, 'Throttling');
    assert.equal(throttled.$metadata?.httpStatusCode, 400);
    const retrying = new SNSClient(clientConfig(sns.url, SERVICE_CREDENTIALS, 2));
    sns.throttle(1);
    await retrying.send(new PublishCommand({ TopicArn: topic.arn, Message: 'after a retry' }));
    retrying.destroy();
    assert.equal(sns.messages.at(-1)?.message, 'after a retry');
  });

  test('a message of exactly 262,144 bytes is accepted, one byte more is InvalidParameterException', async () => {
    const limit = `${'€'.repeat((MAX_MESSAGE_BYTES - 1) / 3)}x`;
    assert.equal(Buffer.byteLength(limit), MAX_MESSAGE_BYTES);
    await client.send(new PublishCommand({ TopicArn: topic.arn, Message: limit }));
    assert.equal(sns.messages.at(-1)?.message, limit);
    const tooLarge = await rejection(client.send(new PublishCommand({ TopicArn: topic.arn, Message: `${limit}x` })));
    assert.ok(tooLarge instanceof InvalidParameterException, `${tooLarge.name}: ${tooLarge.message}`);
    assert.equal(tooLarge.message, 'Invalid parameter: Message too long');
  });

  test('a wrong secret is SignatureDoesNotMatch, an unknown key InvalidClientTokenId', async () => {
    const wrong = new SNSClient(clientConfig(sns.url, WRONG_SECRET));
    const unknown = new SNSClient(clientConfig(sns.url, UNKNOWN_KEY));
    const badSignature = await rejection(wrong.send(new PublishCommand({ TopicArn: topic.arn, Message: 'x' })));
    const badKey = await rejection(unknown.send(new PublishCommand({ TopicArn: topic.arn, Message: 'x' })));
    wrong.destroy();
    unknown.destroy();
    assert.equal(badSignature.name, 'SignatureDoesNotMatch');
    assert.equal(badKey.name, 'InvalidClientTokenId');
    assert.equal(badKey.$metadata?.httpStatusCode, 403);
  });
});

describe('EventBridge emulator', () => {
  let events: EventBridgeEndpoint;
  let client: EventBridgeClient;
  let bus: { name: string; arn: string };
  before(async () => {
    events = await startEventBridgeEndpoint();
    client = new EventBridgeClient(clientConfig(events.url));
    bus = events.createBus('deliveries');
  });
  after(async () => {
    client.destroy();
    await events.close();
  });

  const entry = (extra: Partial<PutEventsRequestEntry> = {}): PutEventsRequestEntry => ({
    EventBusName: bus.arn,
    Source: 'barge.cargo',
    DetailType: 'Cargo Delivered',
    Detail: JSON.stringify({ text: AWKWARD }),
    ...extra,
  });

  test('an event is accepted and recorded byte-exact, by bus ARN or name', async () => {
    const time = new Date('2026-11-22T12:00:00.250Z');
    const out = await client.send(
      new PutEventsCommand({
        Entries: [entry({ Resources: ['arn:aws:s3:::bucket/key'], Time: time }), entry({ EventBusName: 'deliveries' })],
      }),
    );
    assert.equal(out.FailedEntryCount, 0);
    const [first, second] = events.events.slice(-2);
    assert.ok(first && second);
    assert.equal(out.Entries?.[0]?.EventId, first.eventId);
    assert.equal(first.busArn, `arn:aws:events:us-east-1:${DEFAULT_ACCOUNT}:event-bus/deliveries`);
    assert.equal(first.busName, 'deliveries');
    assert.equal(first.source, 'barge.cargo');
    assert.equal(first.detailType, 'Cargo Delivered');
    assert.equal(first.detail, JSON.stringify({ text: AWKWARD }));
    assert.deepEqual(first.resources, ['arn:aws:s3:::bucket/key']);
    assert.equal(first.time?.toISOString(), time.toISOString());
    assert.equal(first.accessKeyId, SERVICE_CREDENTIALS.accessKeyId);
    assert.equal(second.busArn, bus.arn);
    assert.equal(events.requests.at(-1)?.operation, 'AWSEvents.PutEvents');
  });

  test('entries without Detail or with a malformed one fail per entry, as EventBridge does', async () => {
    const out = await client.send(
      new PutEventsCommand({ Entries: [entry(), entry({ Detail: '[1]' }), entry({ Detail: undefined })] }),
    );
    assert.equal(out.FailedEntryCount, 2);
    assert.ok(out.Entries?.[0]?.EventId);
    assert.equal(out.Entries?.[1]?.ErrorCode, 'MalformedDetail');
    assert.equal(out.Entries?.[2]?.ErrorCode, 'InvalidArgument');
  });

  test('an unknown bus succeeds and drops the event (real EventBridge), or is ResourceNotFoundException', async () => {
    const out = await client.send(new PutEventsCommand({ Entries: [entry({ EventBusName: 'nope' })] }));
    assert.equal(out.FailedEntryCount, 0);
    assert.equal(events.dropped.at(-1)?.eventId, out.Entries?.[0]?.EventId);
    assert.equal(events.dropped.at(-1)?.busName, 'nope');

    const strict = await startEventBridgeEndpoint({ unknownBus: 'not-found' });
    const strictClient = new EventBridgeClient(clientConfig(strict.url));
    const error = await rejection(
      strictClient.send(new PutEventsCommand({ Entries: [entry({ EventBusName: 'nope' })] })),
    );
    await strictClient.send(new PutEventsCommand({ Entries: [entry({ EventBusName: 'default' })] }));
    strictClient.destroy();
    await strict.close();
    assert.ok(error instanceof ResourceNotFoundException, `${error.name}: ${error.message}`);
    assert.equal(error.message, 'Event bus nope does not exist.');
  });

  test('deny and allowOnly answer AccessDeniedException', async () => {
    events.deny(bus.arn);
    const denied = await rejection(client.send(new PutEventsCommand({ Entries: [entry()] })));
    events.deny(bus.arn, false);
    assert.ok(denied instanceof AccessDeniedException, `${denied.name}: ${denied.message}`);
    events.allowOnly(SERVICE_CREDENTIALS.accessKeyId, [
      `arn:aws:events:us-east-1:${DEFAULT_ACCOUNT}:event-bus/default`,
    ]);
    const limited = await rejection(client.send(new PutEventsCommand({ Entries: [entry()] })));
    await client.send(new PutEventsCommand({ Entries: [entry({ EventBusName: undefined })] }));
    events.allowOnly(SERVICE_CREDENTIALS.accessKeyId, null);
    assert.ok(limited instanceof AccessDeniedException);
  });

  test('throttle answers ThrottlingException, which the SDK retries', async () => {
    events.throttle(1);
    const throttled = await rejection(client.send(new PutEventsCommand({ Entries: [entry()] })));
    assert.ok(throttled instanceof ThrottlingException, `${throttled.name}: ${throttled.message}`);
    const retrying = new EventBridgeClient(clientConfig(events.url, SERVICE_CREDENTIALS, 2));
    events.throttle(1);
    const out = await retrying.send(new PutEventsCommand({ Entries: [entry({ DetailType: 'after a retry' })] }));
    retrying.destroy();
    assert.equal(out.FailedEntryCount, 0);
    assert.equal(events.events.at(-1)?.detailType, 'after a retry');
  });

  test('an entry of exactly 262,144 bytes (as AWS computes it) is accepted, one more is ValidationException', async () => {
    const base = entry({ Resources: ['arn:aws:s3:::bucket/key'], Time: new Date(), Detail: '{"pad":""}' });
    const pad = MAX_MESSAGE_BYTES - putEventsEntrySize(base);
    const atLimit = entry({ ...base, Detail: JSON.stringify({ pad: 'p'.repeat(pad) }) });
    assert.equal(putEventsEntrySize(atLimit), MAX_MESSAGE_BYTES);
    const out = await client.send(new PutEventsCommand({ Entries: [atLimit] }));
    assert.equal(out.FailedEntryCount, 0);
    assert.equal(events.events.at(-1)?.detail, atLimit.Detail);
    const over = entry({ ...base, Detail: JSON.stringify({ pad: 'p'.repeat(pad + 1) }) });
    const error = await rejection(client.send(new PutEventsCommand({ Entries: [over] })));
    assert.equal(error.name, 'ValidationException');
    assert.equal(error.message, 'Total size of the entries in the request is over the limit.');
    assert.equal(error.$metadata?.httpStatusCode, 400);
  });

  test('a wrong secret is InvalidSignatureException, an unknown key UnrecognizedClientException', async () => {
    const wrong = new EventBridgeClient(clientConfig(events.url, WRONG_SECRET));
    const unknown = new EventBridgeClient(clientConfig(events.url, UNKNOWN_KEY));
    const badSignature = await rejection(wrong.send(new PutEventsCommand({ Entries: [entry()] })));
    const badKey = await rejection(unknown.send(new PutEventsCommand({ Entries: [entry()] })));
    wrong.destroy();
    unknown.destroy();
    assert.equal(badSignature.name, 'InvalidSignatureException');
    assert.equal(badKey.name, 'UnrecognizedClientException');
  });
});

describe('credentials from the test STS endpoint', () => {
  test('work on all three emulators, which record the key that sent each message', async () => {
    const sts = await startStsEndpoint();
    const [sqs, sns, events] = await Promise.all([startSqsEndpoint(), startSnsEndpoint(), startEventBridgeEndpoint()]);
    const roleArn = `arn:aws:iam::${DEFAULT_ACCOUNT}:role/barge-delivery`;
    sts.addRole(roleArn, 'external-id');
    const stsClient = new STSClient(clientConfig(sts.url));
    const assumed = await stsClient.send(
      new AssumeRoleCommand({
        RoleArn: roleArn,
        RoleSessionName: 'barge-delivery',
        ExternalId: 'external-id',
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Action: 's3:PutObject', Resource: 'arn:aws:s3:::bucket/prefix/*' }],
        }),
      }),
    );
    stsClient.destroy();
    const credentials = {
      accessKeyId: assumed.Credentials?.AccessKeyId as string,
      secretAccessKey: assumed.Credentials?.SecretAccessKey as string,
      sessionToken: assumed.Credentials?.SessionToken as string,
    };
    assert.match(credentials.accessKeyId, /^ASIA/);

    const queue = sqs.createQueue('from-sts');
    const topic = sns.createTopic('from-sts');
    const bus = events.createBus('from-sts');
    const sqsClient = new SQSClient(clientConfig(sqs.url, credentials));
    const snsClient = new SNSClient(clientConfig(sns.url, credentials));
    const eventsClient = new EventBridgeClient(clientConfig(events.url, credentials));
    await sqsClient.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'via sts' }));
    await snsClient.send(new PublishCommand({ TopicArn: topic.arn, Message: 'via sts' }));
    await eventsClient.send(
      new PutEventsCommand({ Entries: [{ EventBusName: bus.name, Source: 's', DetailType: 'd', Detail: '{}' }] }),
    );
    // The same key without its session token is not valid.
    const tokenless = new SQSClient(
      clientConfig(sqs.url, { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey }),
    );
    const error = await rejection(tokenless.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x' })));
    for (const client of [sqsClient, snsClient, eventsClient, tokenless]) client.destroy();
    await Promise.all([sqs.close(), sns.close(), events.close(), sts.close()]);

    assert.equal(sqs.messages[0]?.accessKeyId, credentials.accessKeyId);
    assert.equal(sns.messages[0]?.accessKeyId, credentials.accessKeyId);
    assert.equal(events.events[0]?.accessKeyId, credentials.accessKeyId);
    for (const endpoint of [sqs, sns, events]) {
      assert.equal(endpoint.requests[0]?.sessionToken, credentials.sessionToken);
    }
    assert.equal(error.name, 'InvalidClientTokenId');
  });

  test('a key registered directly with the emulators works too', async () => {
    const sqs = await startSqsEndpoint();
    const queue = sqs.createQueue('direct');
    registerMessagingKeyPair('AKIADIRECTLY00000001', 'direct-secret');
    const client = new SQSClient(
      clientConfig(sqs.url, { accessKeyId: 'AKIADIRECTLY00000001', secretAccessKey: 'direct-secret' }),
    );
    await client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'direct' }));
    client.destroy();
    forgetMessagingKeyPair('AKIADIRECTLY00000001');
    await sqs.close();
    assert.equal(sqs.messages[0]?.accessKeyId, 'AKIADIRECTLY00000001');
  });
});
