/** `connection check` for message targets: assume the role and send one marked message. */
import type { Clock } from '../../domain/clock.js';
import {
  type MessageTarget,
  type ResolvedTarget,
  SEND_ACTIONS,
  VERIFICATION_ATTRIBUTE,
  VERIFICATION_MESSAGE,
} from '../../domain/message-targets.js';
import { messageSessionPolicyJson } from '../../domain/session-policy.js';
import { applyConnectionEffect, type Connection } from '../../store/admin/connections.js';
import type { Database } from '../../store/database.js';
import { type AwsDeliveryDeps, connectionCredentials } from '../aws/connection-access.js';
import { accessResult, type CapabilityResult, underCheckSlot } from '../capability.js';
import type { MessageTargetKind } from './message-kind.js';
import { sendThroughConnection } from './message-send.js';

export interface MessageCheckReport {
  connectionId: string;
  target: string;
  ok: boolean;
  capabilities: { assumeRole: CapabilityResult; send: CapabilityResult };
}

export interface MessageCheckDeps {
  database: Database;
  clock: Clock;
  aws: AwsDeliveryDeps;
}

/**
 * The capability check of a message target (document 6.3 rule 9, applied to 6.4): really assumes
 * the role with the delivery session's policy and sends one marked message (SQS/SNS: message
 * attribute `barge_verification`; EventBridge: detail `{"barge_verification": true}`), which
 * consumers skip. Limited like the object check: one per minute per connection, across
 * processes, not counting one that could not assume the role; a role-only probe sends nothing and
 * is not limited. A passing check ends an incident.
 */
export async function checkMessageTarget(
  deps: MessageCheckDeps,
  kind: MessageTargetKind,
  input: { connection: Connection; target: MessageTarget; resolved: ResolvedTarget; roleOnly: boolean },
): Promise<MessageCheckReport | { refused: true; waitMs: number }> {
  const { connection, target, resolved } = input;
  const report = (assumeRole: CapabilityResult, send: CapabilityResult): MessageCheckReport => ({
    connectionId: connection.id,
    target: resolved.arn,
    ok: assumeRole.status !== 'failed' && send.status !== 'failed',
    capabilities: { assumeRole, send },
  });
  if (input.roleOnly) {
    const timeoutMs = deps.aws.config.attemptTimeoutMs;
    const policy = messageSessionPolicyJson(SEND_ACTIONS[kind.type], resolved.arn);
    const access = await connectionCredentials(
      deps.aws,
      connection,
      policy,
      AbortSignal.timeout(timeoutMs),
      deps.aws.now() + timeoutMs,
    );
    return report(
      accessResult(
        connection,
        access.ok ? access : { ok: false, detail: `${access.failure.errorClass}: ${access.failure.detail}` },
      ),
      { status: 'skipped', detail: 'not probed (--role-only)' },
    );
  }

  const now = deps.clock.now();
  return underCheckSlot(deps.database, { connectionId: connection.id, now }, async () => {
    const sent = await sendThroughConnection(deps.aws, kind, connection, target, resolved, {
      body: VERIFICATION_MESSAGE,
      attributes: { [VERIFICATION_ATTRIBUTE]: 'true' },
      deduplicationId: `barge-verification-${now}`,
      groupId: 'barge-verification',
    });
    let result: MessageCheckReport;
    if (sent.ok) {
      result = report(accessResult(connection, { ok: true }), {
        status: 'ok',
        detail: `${SEND_ACTIONS[kind.type]} on ${resolved.arn}: ${sent.excerpt}`,
      });
    } else if (sent.stage === 'access') {
      result = report(accessResult(connection, { ok: false, detail: `${sent.errorClass}: ${sent.detail}` }), {
        status: 'skipped',
        detail: 'not probed: no access',
      });
    } else {
      result = report(accessResult(connection, { ok: true }), {
        status: 'failed',
        detail: `${sent.errorClass}: ${sent.detail}`,
      });
    }
    if (result.ok)
      await applyConnectionEffect(deps.database, { connectionId: connection.id, to: 'active' }, deps.clock.now());
    return { report: result, wroteNothing: !sent.ok && sent.stage === 'access' };
  });
}
