/** What the connection-based channels (object store, SQS, SNS, EventBridge) share around their own write or send. */
import { CONNECTION_NOT_FOUND, connectionNotFoundDetail } from '../domain/connections.js';
import { type DeliveredResult, resultUrl } from '../domain/object-body.js';
import type { Connection } from '../store/admin/connections.js';
import type { DueDelivery } from '../store/deliveries/claim.js';
import { type ConnectionEffect, type DispatchOutcome, failed } from './channel.js';
import { type IncidentTarget, incidentMail } from './incident-mail.js';

/** A project's connection by id; undefined when it does not exist (deleted) or is another project's. */
export type FindConnection = (projectId: string, connectionId: string) => Promise<Connection | undefined>;

/** What a target's own write or send came to. */
export type TargetOutcome =
  | { ok: true; excerpt: string }
  | { ok: false; errorClass: string; detail: string; statusCode: number | null };

/**
 * The part every connection-based channel (object store, SQS, SNS, EventBridge) shares: the
 * connection must still exist (a deleted one fails the delivery at once, without retries), an
 * access denial marks it failed with one incident mail, and a success through a failed one ends
 * the incident. Tracking shows `last_error`: it starts with the class, so the class is visible there.
 */
export async function deliverThroughConnection(
  findConnection: FindConnection,
  due: DueDelivery,
  connectionId: string,
  target: IncidentTarget,
  send: (connection: Connection) => Promise<TargetOutcome>,
): Promise<DispatchOutcome> {
  const connection = await findConnection(due.projectId, connectionId);
  if (!connection) {
    return failed(CONNECTION_NOT_FOUND, connectionNotFoundDetail(connectionId), { retryable: false });
  }
  const outcome = await send(connection);
  if (outcome.ok) {
    const effect: ConnectionEffect | undefined =
      connection.status === 'failed' ? { connectionId: connection.id, to: 'active' } : undefined;
    return { kind: 'delivered', statusCode: 200, responseExcerpt: outcome.excerpt, ...(effect ? { effect } : {}) };
  }
  const detail = `${outcome.errorClass}: ${outcome.detail}`;
  if (outcome.errorClass !== 'assume_role_denied') {
    return failed(outcome.errorClass, detail, { statusCode: outcome.statusCode });
  }
  const mail = due.notificationEmail
    ? incidentMail({
        to: due.notificationEmail,
        projectSlug: due.projectSlug,
        connection,
        target,
        cargoId: due.cargoId,
        detail: outcome.detail,
      })
    : null;
  return failed(outcome.errorClass, detail, {
    statusCode: outcome.statusCode,
    effect: { connectionId: connection.id, to: 'failed', reason: detail, mail },
  });
}

/** The result a delivery hands over, as the envelope builders take it, with its mailbox address. */
export function deliveredResult(due: DueDelivery, publicBaseUrl: string): DeliveredResult {
  return {
    cargoId: due.cargoId,
    success: due.success,
    responseJson: due.response,
    errorMessage: due.errorMessage,
    metadataJson: due.metadata,
    resultUrl: resultUrl(publicBaseUrl, due.cargoId),
  };
}
