import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { smtpMailer } from '../mail/mailer.js';
import type { Logger } from '../pipeline/context.js';
import type { Database } from '../store/database.js';
import type { DeliveryChannel } from './channel.js';
import { bucketWriterFromConfig } from './object-store/bucket-writer.js';
import { ObjectStoreChannel } from './object-store/object-store-channel.js';
import { createWebhookAgent } from './webhook/http-client.js';
import { WebhookChannel } from './webhook/webhook-channel.js';

export interface ChannelDeps {
  database: Database;
  clock: Clock;
  log: Logger;
}

/** The delivery channels of this process, by the name delivery rows carry. */
export function buildChannels(config: Config, version: string, deps: ChannelDeps): Map<string, DeliveryChannel> {
  const blockPrivateAddresses = !config.allowPrivateCallbacks;
  const webhook = new WebhookChannel({
    agent: createWebhookAgent({
      timeoutMs: config.delivery.webhookTimeoutMs,
      connectionsPerHost: config.delivery.maxPerHost,
      blockPrivateAddresses,
    }),
    timeoutMs: config.delivery.webhookTimeoutMs,
    blockPrivateAddresses,
    userAgent: `barge/${version} (webhook delivery)`,
    // Receivers check webhook-timestamp against their own clocks: sign with the real time.
    now: () => Date.now(),
  });
  const objectStore = new ObjectStoreChannel({
    database: deps.database,
    clock: deps.clock,
    writer: bucketWriterFromConfig(config),
    mailer: smtpMailer(config.smtp),
    publicBaseUrl: config.publicBaseUrl,
    log: deps.log,
  });
  return new Map<string, DeliveryChannel>([
    [webhook.name, webhook],
    [objectStore.name, objectStore],
  ]);
}

/** Deliverer settings from the config: an attempt's lease outlives the longest attempt of any channel. */
export function delivererSettings(config: Config) {
  return {
    retryDelaysMs: config.delivery.retryDelaysMs,
    leaseMs: Math.max(config.delivery.webhookTimeoutMs, config.objectStore.attemptTimeoutMs) + 30_000,
    maxInFlight: config.delivery.maxInFlight,
    maxPerHost: config.delivery.maxPerHost,
  };
}
