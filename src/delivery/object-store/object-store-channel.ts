/** The object-store channel: the result written as `{key_prefix}{cargo_id}.json` into the customer's bucket. */
import { deliveredObjectJson, deliveredObjectMetadata } from '../../domain/object-body.js';
import { parseStoredTarget, resultObjectKey } from '../../domain/object-target.js';
import type { DueDelivery } from '../../store/deliveries/claim.js';
import { type DeliveryChannel, type DeliveryTarget, type DispatchOutcome, failed } from '../channel.js';
import { deliveredResult, deliverThroughConnection, type FindConnection } from '../connection-target.js';
import type { BucketWriter } from './bucket-writer.js';

export interface ObjectStoreChannelDeps {
  findConnection: FindConnection;
  writer: BucketWriter;
  publicBaseUrl: string;
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
    if (!target) return failed('internal', 'the stored object-store target cannot be read', { retryable: false });
    const key = resultObjectKey(target.key_prefix, due.cargoId);
    const incident = {
      description: `bucket ${target.bucket_arn}`,
      permission: `s3:PutObject on ${target.bucket_arn}/${target.key_prefix}*`,
      checks: [
        'no bucket policy denies the write',
        'if the bucket encrypts with a customer-managed KMS key, the role may kms:GenerateDataKey on it',
      ],
    };
    return deliverThroughConnection(
      this.deps.findConnection,
      due,
      target.connection_id,
      incident,
      async (connection) => {
        const outcome = await this.deps.writer.write({
          connection,
          bucket: target.bucket,
          keyPrefix: target.key_prefix,
          key,
          body: deliveredObjectJson(deliveredResult(due, this.deps.publicBaseUrl)),
          metadata: deliveredObjectMetadata(due.cargoId, due.success),
        });
        if (!outcome.ok) return outcome;
        const excerpt = JSON.stringify({
          key,
          etag: outcome.etag,
          version_id: outcome.versionId,
          region: outcome.region,
        });
        return { ok: true, excerpt };
      },
    );
  }
}
