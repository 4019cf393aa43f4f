/** Sending one message to a message target through a connection, every failure classified as object delivery's are. */
import { type MessageTarget, type ResolvedTarget, SEND_ACTIONS } from '../../domain/message-targets.js';
import { messageSessionPolicyJson } from '../../domain/session-policy.js';
import type { Connection } from '../../store/admin/connections.js';
import { awsFailure, describe, isNetworkError, isTimeout } from '../aws/aws-errors.js';
import {
  type AwsDeliveryDeps,
  connectionCredentials,
  forgetSession,
  type Step,
  throttledFailure,
  withAwsBackoff,
} from '../aws/connection-access.js';
import { isThrottledResult } from '../aws/throttle-backoff.js';
import type { TargetOutcome } from '../connection-target.js';
import type { MessageTargetKind, OutgoingMessage } from './message-kind.js';

/** Codes every AWS service uses when the caller's credentials may not do this. */
const DENIED = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'AuthorizationError',
  'AuthorizationErrorException',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'InvalidSignatureException',
]);
const STALE_SESSION = new Set(['ExpiredToken', 'ExpiredTokenException', 'InvalidToken', 'TokenRefreshRequired']);

/**
 * Sends one message to a target through a connection: an assumed-role session whose policy
 * allows only the target's one action on it, throttling backed off within the attempt, and every
 * failure classified as object delivery's are (target_not_found, assume_role_denied,
 * target_misconfigured, throttled, and transient ones).
 */
export async function sendThroughConnection(
  deps: AwsDeliveryDeps,
  kind: MessageTargetKind,
  connection: Connection,
  target: MessageTarget,
  resolved: ResolvedTarget,
  message: OutgoingMessage,
): Promise<TargetOutcome & { stage?: 'access' | 'send' }> {
  const timeoutMs = deps.config.attemptTimeoutMs;
  const signal = AbortSignal.timeout(timeoutMs);
  const deadline = deps.now() + timeoutMs;
  const policy = messageSessionPolicyJson(SEND_ACTIONS[kind.type], resolved.arn);
  const access = await connectionCredentials(deps, connection, policy, signal, deadline);
  if (!access.ok) return { ok: false, stage: 'access', ...access.failure };

  const sent = await withAwsBackoff(
    deps,
    async (): Promise<Step<string>> => {
      try {
        const client = { region: resolved.region, credentials: access.credentials };
        return { ok: true, value: await kind.send(deps.clients, client, target, resolved, message, signal) };
      } catch (err) {
        return { ok: false, failure: awsFailure(err) };
      }
    },
    deadline,
  );
  if (isThrottledResult(sent)) return { ok: false, stage: 'send', ...throttledFailure(sent.tries, sent.detail) };
  if (sent.ok) return { ok: true, excerpt: JSON.stringify({ message_id: sent.value, target: resolved.arn }) };

  const { failure } = sent;
  const what = `${describe(failure)} (${kind.describe(target)})`;
  const fail = (errorClass: string, detail: string) =>
    ({ ok: false, stage: 'send', errorClass, detail, statusCode: failure.statusCode }) as const;
  if (kind.isNotFound(failure.code)) return fail('target_not_found', `the target does not exist: ${what}`);
  if (kind.isMisconfigured(failure.code)) {
    return fail('target_misconfigured', `the target's encryption key cannot be used: ${what}`);
  }
  if (DENIED.has(failure.code) || failure.statusCode === 403) {
    forgetSession(deps, connection, policy);
    return fail('assume_role_denied', `${SEND_ACTIONS[kind.type]} was denied: ${what}`);
  }
  if (STALE_SESSION.has(failure.code)) forgetSession(deps, connection, policy);
  if (isTimeout(failure)) return fail('timeout', what);
  if (isNetworkError(failure)) return fail('network', what);
  return fail('target_error', what);
}
