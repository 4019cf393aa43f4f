/** The SQS message target: how a result is sent to a queue. */
import { type MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { MessageTargetKind } from '../messages/message-kind.js';

/**
 * SQS queues (`callback.type` `sqs`): SendMessage with the result as the body and `svc-cargo-id`,
 * `svc-success` as message attributes. A FIFO queue (`.fifo`) gets the cargo id as message group
 * and the delivery id as deduplication id, so a retry within five minutes is not a second message.
 */
export const sqsTarget: MessageTargetKind = {
  type: 'sqs',
  describe: (target) => `SQS queue ${target.type === 'sqs' ? target.queue_url : ''}`,
  async send(clients, client, target, resolved, message, signal) {
    if (target.type !== 'sqs') throw new Error('not an SQS target');
    const fifo = resolved.name.endsWith('.fifo');
    const attributes: Record<string, MessageAttributeValue> = {};
    for (const [name, value] of Object.entries(message.attributes)) {
      attributes[name] = { DataType: 'String', StringValue: value };
    }
    const output = await clients.sqs(client).send(
      new SendMessageCommand({
        QueueUrl: target.queue_url,
        MessageBody: message.body,
        MessageAttributes: attributes,
        ...(fifo ? { MessageGroupId: message.groupId, MessageDeduplicationId: message.deduplicationId } : {}),
      }),
      { abortSignal: signal },
    );
    return output.MessageId ?? '';
  },
  isNotFound: (code) => code === 'QueueDoesNotExist' || code === 'AWS.SimpleQueueService.NonExistentQueue',
  isMisconfigured: (code) =>
    /^Kms(AccessDenied|Disabled|NotFound|InvalidState|InvalidKeyUsage|OptInRequired)/.test(code),
};
