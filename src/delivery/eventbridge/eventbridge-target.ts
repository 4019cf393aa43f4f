/** The EventBridge message target: how a result is sent to an event bus. */
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { EVENT_SOURCE } from '../../domain/message-targets.js';
import type { MessageTargetKind } from '../messages/message-kind.js';

/**
 * EventBridge event buses (`callback.type` `eventbridge`): PutEvents with source `barge`, the
 * cargo's detail type (default `barge.cargo.finished`) and the result as `detail`. PutEvents
 * answers 200 even when the entry was refused; that entry error is thrown like a request error.
 */
export const eventBridgeTarget: MessageTargetKind = {
  type: 'eventbridge',
  describe: (target) => `EventBridge event bus ${target.type === 'eventbridge' ? target.event_bus_arn : ''}`,
  async send(clients, client, target, _resolved, message, signal) {
    if (target.type !== 'eventbridge') throw new Error('not an EventBridge target');
    const output = await clients.eventBridge(client).send(
      new PutEventsCommand({
        Entries: [
          {
            Source: EVENT_SOURCE,
            DetailType: target.detail_type,
            Detail: message.body,
            EventBusName: target.event_bus_arn,
          },
        ],
      }),
      { abortSignal: signal },
    );
    const entry = output.Entries?.[0];
    if ((output.FailedEntryCount ?? 0) > 0 || !entry?.EventId) {
      throw Object.assign(new Error(entry?.ErrorMessage ?? 'the event was not accepted'), {
        name: entry?.ErrorCode ?? 'FailedEntry',
        $response: { statusCode: 200, headers: {} },
        $metadata: { httpStatusCode: 200 },
      });
    }
    return entry.EventId;
  },
  isNotFound: (code) => code === 'ResourceNotFoundException',
  isMisconfigured: (code) => code.startsWith('KMS'),
};
