/**
 * The AWS side of a capability check, behind a small interface: check-connection.ts decides what
 * to check, these do it. Every AWS module (and so the SDK) is imported here on first use only, so
 * code that merely imports the operations, such as every admin command, never loads the SDK.
 */
import type { Config } from '../config.js';
import type { MessageCheckReport } from '../delivery/messages/message-check.js';
import type { CheckReport } from '../delivery/object-store/capability-check.js';
import type { MessageTarget, ResolvedTarget } from '../domain/message-targets.js';
import type { Connection } from '../store/admin/connections.js';
import type { OperationDeps } from './operation.js';

export type Refused = { refused: true; waitMs: number };

export interface CapabilityCheckers {
  /** Assumes the role and writes `{keyPrefix}svc-verify.json` (role only: assumes the role). */
  checkBucket(input: {
    connection: Connection;
    bucket: string;
    keyPrefix: string;
    roleOnly: boolean;
  }): Promise<CheckReport | Refused>;
  /** Assumes the role and sends one marked message (role only: assumes the role). */
  checkMessageTarget(input: {
    connection: Connection;
    target: MessageTarget;
    resolved: ResolvedTarget;
    roleOnly: boolean;
  }): Promise<MessageCheckReport | Refused>;
  /** Releases the clients (sockets) the checks opened. */
  close(): void;
}

/** The real checkers, over AWS (or the endpoints the configuration names). */
export async function openAwsCapabilityCheckers(deps: OperationDeps & { config: Config }): Promise<CapabilityCheckers> {
  const { awsDeliveryDeps } = await import('../delivery/aws/connection-access.js');
  const aws = awsDeliveryDeps(deps.config);
  return {
    async checkBucket(input) {
      const { bucketWriterFromConfig } = await import('../delivery/object-store/bucket-writer.js');
      const { checkConnection } = await import('../delivery/object-store/capability-check.js');
      const writer = bucketWriterFromConfig(deps.config, aws);
      return checkConnection({ database: deps.database, clock: deps.clock, writer }, input);
    },
    async checkMessageTarget(input) {
      const { messageTargetKinds } = await import('../delivery/registry.js');
      const { checkMessageTarget } = await import('../delivery/messages/message-check.js');
      return checkMessageTarget(
        { database: deps.database, clock: deps.clock, aws },
        messageTargetKinds[input.target.type],
        input,
      );
    },
    close: () => aws.clients.destroy(),
  };
}
