/** The delivery channel of message targets (SQS, SNS, EventBridge): one channel, one module per kind. */
import { targetMessageJson } from '../../domain/envelope.js';
import {
  INLINE_RESPONSE_MAX_BYTES,
  parseStoredMessageTarget,
  type ResolvedTarget,
  resolveMessageTarget,
  SEND_ACTIONS,
} from '../../domain/message-targets.js';
import { deliveredObjectMetadata } from '../../domain/object-body.js';
import type { DueDelivery } from '../../store/deliveries/claim.js';
import type { AwsDeliveryDeps } from '../aws/connection-access.js';
import { type DeliveryChannel, type DeliveryTarget, type DispatchOutcome, failed } from '../channel.js';
import { deliveredResult, deliverThroughConnection, type FindConnection } from '../connection-target.js';
import type { MessageTargetKind } from './message-kind.js';
import { sendThroughConnection } from './message-send.js';

export interface MessageChannelDeps {
  aws: AwsDeliveryDeps;
  findConnection: FindConnection;
  publicBaseUrl: string;
  /** BARGE_AWS_SQS_ENDPOINT is set: queue URLs of any host are taken (see parseQueueUrl). */
  sqsEndpointOverride: boolean;
}

/**
 * The delivery channel of one kind of message target (SQS, SNS or EventBridge): the webhook
 * payload plus `result_url` (a response above 240,000 bytes of JSON is left out and flagged
 * `oversize`), the same bytes on every attempt, through the project's connection.
 */
export class MessageChannel implements DeliveryChannel {
  readonly name: MessageTargetKind['type'];

  constructor(
    private readonly kind: MessageTargetKind,
    private readonly deps: MessageChannelDeps,
  ) {
    this.name = kind.type;
  }

  concurrencyKey(target: DeliveryTarget): string {
    const parsed = parseStoredMessageTarget(target.callback);
    const resolved = parsed && this.resolve(parsed);
    return resolved && !('problem' in resolved) ? resolved.arn : '';
  }

  async deliver(due: DueDelivery): Promise<DispatchOutcome> {
    const target = parseStoredMessageTarget(due.callback);
    const resolved = target?.type === this.kind.type ? this.resolve(target) : null;
    if (!target || !resolved || 'problem' in resolved) {
      return failed('internal', `the stored ${this.kind.type} target cannot be read`, { retryable: false });
    }
    const incident = {
      description: this.kind.describe(target),
      permission: `${SEND_ACTIONS[this.kind.type]} on ${resolved.arn}`,
      checks: [
        'no resource policy of the target denies it',
        ...(this.kind.type === 'eventbridge'
          ? []
          : [
              'if the target encrypts with a customer-managed KMS key, the role may use it (kms:GenerateDataKey, kms:Decrypt)',
            ]),
      ],
    };
    const body = targetMessageJson(deliveredResult(due, this.deps.publicBaseUrl), INLINE_RESPONSE_MAX_BYTES);
    return deliverThroughConnection(this.deps.findConnection, due, target.connection_id, incident, (connection) =>
      sendThroughConnection(this.deps.aws, this.kind, connection, target, resolved, {
        body,
        attributes: deliveredObjectMetadata(due.cargoId, due.success),
        deduplicationId: due.delivery.id,
        groupId: due.cargoId,
      }),
    );
  }

  private resolve(target: Parameters<typeof resolveMessageTarget>[0]): ResolvedTarget | { problem: string } {
    return resolveMessageTarget(target, {
      sqsEndpointOverride: this.deps.sqsEndpointOverride,
      defaultRegion: this.deps.aws.config.region,
    });
  }
}
