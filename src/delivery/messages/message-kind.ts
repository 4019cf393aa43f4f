/** The interface of one kind of message target (SQS, SNS, EventBridge), and the message it sends. */
import type { MessageTarget, MessageTargetType, ResolvedTarget } from '../../domain/message-targets.js';
import type { AwsClients, MessageTarget as ClientTarget } from '../aws/aws-clients.js';

/** One message to a target: the body and the attributes consumers filter on. */
export interface OutgoingMessage {
  body: string;
  /** String attributes (SQS/SNS message attributes; EventBridge has none). */
  attributes: Record<string, string>;
  /** Same on every attempt of one delivery: FIFO queues and topics drop a repeat within 5 minutes. */
  deduplicationId: string;
  /** FIFO ordering group: the cargo id. */
  groupId: string;
}

/**
 * What is particular to one kind of message target (sqs/, sns/, eventbridge/): how a message is
 * sent with the SDK, and how the service names its errors. Everything else (credentials,
 * throttling backoff, failure classes, incidents) is shared (message-send.ts, message-channel.ts).
 */
export interface MessageTargetKind {
  readonly type: MessageTargetType;
  /** Human words for the target, for incident mail and check reports. */
  describe(target: MessageTarget): string;
  /** Sends; resolves to the service's message id, throws the SDK's error otherwise. */
  send(
    clients: AwsClients,
    client: ClientTarget,
    target: MessageTarget,
    resolved: ResolvedTarget,
    message: OutgoingMessage,
    signal: AbortSignal,
  ): Promise<string>;
  /** The target does not exist (deleted since submit). */
  isNotFound(code: string): boolean;
  /** The target's own encryption key cannot be used. */
  isMisconfigured(code: string): boolean;
}
