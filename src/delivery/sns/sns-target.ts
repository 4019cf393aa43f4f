/** The SNS message target: how a result is published to a topic. */
import { type MessageAttributeValue, PublishCommand } from '@aws-sdk/client-sns';
import type { MessageTargetKind } from '../messages/message-kind.js';

/**
 * SNS topics (`callback.type` `sns`): Publish with the result as the message and `svc-cargo-id`,
 * `svc-success` as message attributes (subscription filter policies can use them). A FIFO topic
 * gets the cargo id as message group and the delivery id as deduplication id.
 */
export const snsTarget: MessageTargetKind = {
  type: 'sns',
  describe: (target) => `SNS topic ${target.type === 'sns' ? target.topic_arn : ''}`,
  async send(clients, client, target, resolved, message, signal) {
    if (target.type !== 'sns') throw new Error('not an SNS target');
    const fifo = resolved.name.endsWith('.fifo');
    const attributes: Record<string, MessageAttributeValue> = {};
    for (const [name, value] of Object.entries(message.attributes)) {
      attributes[name] = { DataType: 'String', StringValue: value };
    }
    const output = await clients.sns(client).send(
      new PublishCommand({
        TopicArn: target.topic_arn,
        Message: message.body,
        MessageAttributes: attributes,
        ...(fifo ? { MessageGroupId: message.groupId, MessageDeduplicationId: message.deduplicationId } : {}),
      }),
      { abortSignal: signal },
    );
    return output.MessageId ?? '';
  },
  isNotFound: (code) => code === 'NotFound' || code === 'NotFoundException',
  isMisconfigured: (code) => /^KMS(AccessDenied|Disabled|NotFound|InvalidState|OptInRequired)/.test(code),
};
