import type { Clock } from '../../domain/clock.js';
import { deliveredObjectJson, deliveredObjectMetadata, resultUrl } from '../../domain/object-body.js';
import { parseStoredTarget, resultObjectKey } from '../../domain/object-target.js';
import type { Mailer } from '../../mail/mailer.js';
import type { Logger } from '../../pipeline/context.js';
import {
  type Connection,
  findProjectConnection,
  markConnectionActive,
  markConnectionFailed,
} from '../../store/connections.js';
import type { Database } from '../../store/database.js';
import type { DueDelivery } from '../../store/deliveries.js';
import type { DeliveryChannel, DeliveryTarget, DispatchOutcome } from '../channel.js';
import type { BucketWriter } from './bucket-writer.js';
import { incidentMail } from './incident-mail.js';

export interface ObjectStoreChannelDeps {
  database: Database;
  clock: Clock;
  writer: BucketWriter;
  mailer: Mailer;
  publicBaseUrl: string;
  log: Logger;
}

/**
 * Writes the result as `{key_prefix}{cargo_id}.json` into the customer's bucket (document 6.3):
 * the same bytes on every attempt, never truncated. An access-denied failure marks the connection
 * failed, and the change to failed sends the project one incident mail; a success ends it.
 */
export class ObjectStoreChannel implements DeliveryChannel {
  readonly name = 'object_store';

  constructor(private readonly deps: ObjectStoreChannelDeps) {}

  concurrencyKey(target: DeliveryTarget): string {
    return parseStoredTarget(target.callback)?.bucket ?? '';
  }

  async deliver(due: DueDelivery): Promise<DispatchOutcome> {
    const target = parseStoredTarget(due.callback);
    if (!target) return failure('internal', 'the stored object-store target cannot be read', null);
    const connection = await findProjectConnection(this.deps.database.db, due.projectId, target.connection_id);
    if (!connection) {
      return failure(
        'connection_not_found',
        `connection ${target.connection_id} no longer exists in this project`,
        null,
      );
    }
    const key = resultObjectKey(target.key_prefix, due.cargoId);
    const outcome = await this.deps.writer.write({
      connection,
      bucket: target.bucket,
      keyPrefix: target.key_prefix,
      key,
      body: deliveredObjectJson({
        cargoId: due.cargoId,
        success: due.success,
        responseJson: due.response,
        errorMessage: due.errorMessage,
        metadataJson: due.metadata,
        resultUrl: resultUrl(this.deps.publicBaseUrl, due.cargoId),
      }),
      metadata: deliveredObjectMetadata(due.cargoId, due.success),
    });
    if (outcome.ok) {
      if (connection.status === 'failed') {
        await markConnectionActive(this.deps.database.db, { id: connection.id, now: this.deps.clock.now() });
      }
      const excerpt = JSON.stringify({
        key,
        etag: outcome.etag,
        version_id: outcome.versionId,
        region: outcome.region,
      });
      return { kind: 'delivered', statusCode: 200, responseExcerpt: excerpt };
    }
    if (outcome.errorClass === 'assume_role_denied') {
      await this.reportDenied(connection, target.bucket_arn, due.cargoId, outcome.detail);
    }
    return failure(outcome.errorClass, outcome.detail, outcome.statusCode);
  }

  private async reportDenied(connection: Connection, bucket: string, cargoId: string, detail: string): Promise<void> {
    const { incident } = await markConnectionFailed(this.deps.database.db, {
      id: connection.id,
      reason: `assume_role_denied: ${detail}`,
      now: this.deps.clock.now(),
    });
    if (!incident) return;
    const log = { connection: connection.id, project: incident.projectSlug };
    if (!incident.notificationEmail) {
      this.deps.log.warn(log, 'connection marked failed; the project has no notification address, so no mail was sent');
      return;
    }
    const sent = await this.deps.mailer.send(
      incidentMail({
        to: incident.notificationEmail,
        projectSlug: incident.projectSlug,
        connection,
        bucket,
        cargoId,
        detail,
      }),
    );
    if (sent.sent) this.deps.log.info(log, 'connection marked failed; incident mail sent');
    else this.deps.log.error({ ...log, reason: sent.reason }, 'connection marked failed; incident mail not sent');
  }
}

/** Tracking shows `last_error`: it starts with the class, so the class is visible there too. */
function failure(errorClass: string, detail: string, statusCode: number | null): DispatchOutcome {
  return { kind: 'failed', errorClass, detail: `${errorClass}: ${detail}`, statusCode, responseExcerpt: null };
}
