/** The delivery channels of a process and the deliverer's settings, built from the config. */
import type { Config } from '../config.js';
import type { MessageTargetType } from '../domain/message-targets.js';
import type { Logger } from '../ports.js';
import type { AwsDeliveryDeps } from './aws/connection-access.js';
import type { DeliveryChannel } from './channel.js';
import type { FindConnection } from './connection-target.js';
import { eventBridgeTarget } from './eventbridge/eventbridge-target.js';
import { MessageChannel } from './messages/message-channel.js';
import type { MessageTargetKind } from './messages/message-kind.js';
import { bucketWriterFromConfig } from './object-store/bucket-writer.js';
import { ObjectStoreChannel } from './object-store/object-store-channel.js';
import { snsTarget } from './sns/sns-target.js';
import { sqsTarget } from './sqs/sqs-target.js';
import { HostAddresses } from './webhook/host-address.js';
import { createWebhookAgent } from './webhook/http-client.js';
import { WebhookChannel } from './webhook/webhook-channel.js';

export interface ChannelDeps {
  /** The AWS side shared by every cloud target: STS, the session cache, pooled sockets. */
  aws: AwsDeliveryDeps;
  findConnection: FindConnection;
  log: Logger;
}

/** Every message target kind, by its `callback.type`: a new one is one module and one line here. */
export const messageTargetKinds: Record<MessageTargetType, MessageTargetKind> = {
  sqs: sqsTarget,
  sns: snsTarget,
  eventbridge: eventBridgeTarget,
};

/** The delivery channels of this process, by the name delivery rows carry. */
export function buildChannels(config: Config, version: string, deps: ChannelDeps): Map<string, DeliveryChannel> {
  const blockPrivateAddresses = !config.allowPrivateCallbacks;
  const webhook = new WebhookChannel({
    agent: createWebhookAgent({
      timeoutMs: config.delivery.webhookTimeoutMs,
      connectionsPerHost: config.delivery.maxPerHost,
      blockPrivateAddresses,
    }),
    addresses: new HostAddresses(),
    timeoutMs: config.delivery.webhookTimeoutMs,
    blockPrivateAddresses,
    userAgent: `barge/${version} (webhook delivery)`,
    secretKey: config.secretKey,
    // Receivers check webhook-timestamp against their own clocks: sign with the real time.
    now: () => Date.now(),
    log: deps.log,
  });
  const objectStore = new ObjectStoreChannel({
    findConnection: deps.findConnection,
    writer: bucketWriterFromConfig(config, deps.aws),
    publicBaseUrl: config.publicBaseUrl,
  });
  const messages = {
    aws: deps.aws,
    findConnection: deps.findConnection,
    publicBaseUrl: config.publicBaseUrl,
    sqsEndpointOverride: config.awsEndpoints.sqs !== null,
  };
  const channels: DeliveryChannel[] = [
    webhook,
    objectStore,
    ...Object.values(messageTargetKinds).map((kind) => new MessageChannel(kind, messages)),
  ];
  return new Map(channels.map((channel) => [channel.name, channel]));
}

/**
 * Deliverer settings from the config. A delivery's lease is BARGE_LEASE_MS like every other
 * lease, renewed while its attempt runs: a crashed worker's deliveries are due again after it.
 */
export function delivererSettings(config: Config) {
  return {
    retryDelaysMs: config.delivery.retryDelaysMs,
    leaseMs: config.pipeline.leaseMs,
    maxInFlight: config.delivery.maxInFlight,
    maxPerHost: config.delivery.maxPerHost,
  };
}
