/**
 * The `callback` object of POST /cargo/load: where a result goes besides the webhook. One of
 * object delivery (document 6.3) and the direct cloud message targets (6.4), each through a
 * connection of the caller's project. Schemas and the submit-time rules: the address must be well
 * formed (400), the connection the project's own (422 connection_not_found), the target on the
 * connection's allow-list if it has one (422 target_not_allowed), a key prefix well formed (422
 * invalid_key_prefix).
 */
import { type Static, Type } from 'typebox';
import { targetAllowed } from '../../domain/connections.js';
import { errors, type FieldError } from '../../domain/errors.js';
import { DEFAULT_DETAIL_TYPE, type MessageTarget, resolveMessageTarget } from '../../domain/message-targets.js';
import {
  bucketAllowed,
  DEFAULT_KEY_PREFIX,
  keyPrefixProblem,
  type ObjectTarget,
  parseBucketArn,
} from '../../domain/object-target.js';

const connectionId = Type.String({
  minLength: 1,
  maxLength: 256,
  description: "A connection of the caller's project (`conn_...`).",
});

const ObjectStoreCallback = Type.Object(
  {
    type: Type.Literal('object_store'),
    connection_id: connectionId,
    bucket_arn: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: '`arn:aws:s3:::<bucket>`, without a key path; on the allow-list of the connection if it has one.',
    }),
    key_prefix: Type.Optional(
      Type.String({
        maxLength: 1024,
        description:
          'Default `convoy/`; `""` is the bucket root. Otherwise it ends with `/`, does not start with `/`, has no `.`, `..` or empty segment and uses only letters, digits, `/` and `!-_.\'()` (no `*` or `?`).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Object delivery: the result is written to `{key_prefix}{cargo_id}.json` in the bucket (docs/object-delivery.md).',
  },
);

const SqsCallback = Type.Object(
  {
    type: Type.Literal('sqs'),
    connection_id: connectionId,
    queue_url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: '`https://sqs.<region>.amazonaws.com/<account>/<queue>`; its ARN on the allow-list if there is one.',
    }),
  },
  { additionalProperties: false, description: 'An SQS message per result (docs/message-targets.md).' },
);

const SnsCallback = Type.Object(
  {
    type: Type.Literal('sns'),
    connection_id: connectionId,
    topic_arn: Type.String({ minLength: 1, maxLength: 2048, description: '`arn:aws:sns:<region>:<account>:<topic>`.' }),
  },
  { additionalProperties: false, description: 'An SNS message per result (docs/message-targets.md).' },
);

const EventBridgeCallback = Type.Object(
  {
    type: Type.Literal('eventbridge'),
    connection_id: connectionId,
    event_bus_arn: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: '`arn:aws:events:<region>:<account>:event-bus/<name>`.',
    }),
    detail_type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: `Default \`${DEFAULT_DETAIL_TYPE}\`; source is \`barge\`.`,
      }),
    ),
  },
  { additionalProperties: false, description: 'An EventBridge event per result (docs/message-targets.md).' },
);

const callbackShapes = Type.Union([ObjectStoreCallback, SqsCallback, SnsCallback, EventBridgeCallback]);
export type Callback = Static<typeof callbackShapes>;

/** One of the shapes, told apart by `type`: validation errors then name the fields of that shape. */
export const Callback = Type.Unsafe<Callback>({
  type: 'object',
  oneOf: [ObjectStoreCallback, SqsCallback, SnsCallback, EventBridgeCallback],
  discriminator: { propertyName: 'type' },
  description: 'Delivery to a cloud target through a connection: `object_store`, `sqs`, `sns` or `eventbridge`.',
});

export type StoredTarget = ObjectTarget | MessageTarget;

const CONNECTION_ID = /^conn_[0-9a-z]{26}$/;

export interface TargetRules {
  /** A connection of the project, by id; undefined for another project's or a missing one. */
  findConnection: (projectId: string, connectionId: string) => Promise<{ allowedTargets: string[] | null } | undefined>;
  sqsEndpointOverride: boolean;
  defaultRegion: string;
}

/** The 400 problems of the target's address (checked with the rest of the body). */
export function targetAddressProblems(callback: Callback, rules: TargetRules): FieldError[] {
  if (callback.type === 'object_store') {
    const bucket = parseBucketArn(callback.bucket_arn);
    return 'problem' in bucket ? [{ path: '/callback/bucket_arn', message: bucket.problem }] : [];
  }
  const resolved = resolveMessageTarget(messageTarget(callback), rules);
  return 'problem' in resolved ? [{ path: resolved.path, message: resolved.problem }] : [];
}

/**
 * The 422 rules, once the body is valid: returns the target as it is stored with the cargo
 * (defaults filled in).
 */
export async function checkTarget(rules: TargetRules, projectId: string, callback: Callback): Promise<StoredTarget> {
  // An id that cannot be one is not looked up (a NUL byte would be an error on PostgreSQL).
  const connection = CONNECTION_ID.test(callback.connection_id)
    ? await rules.findConnection(projectId, callback.connection_id)
    : undefined;
  if (!connection) throw errors.connectionNotFound(callback.connection_id);
  if (callback.type === 'object_store') {
    const keyPrefix = callback.key_prefix ?? DEFAULT_KEY_PREFIX;
    const problem = keyPrefixProblem(keyPrefix);
    if (problem) throw errors.invalidKeyPrefix(keyPrefix, problem);
    const bucket = parseBucketArn(callback.bucket_arn);
    if ('problem' in bucket || !bucketAllowed(connection.allowedTargets, bucket.bucket)) {
      throw errors.targetNotAllowed(`Bucket '${callback.bucket_arn}'`, callback.connection_id);
    }
    return {
      type: 'object_store',
      connection_id: callback.connection_id,
      bucket_arn: callback.bucket_arn,
      key_prefix: keyPrefix,
    };
  }
  const target = messageTarget(callback);
  const resolved = resolveMessageTarget(target, rules);
  if ('problem' in resolved) throw errors.invalidBody([{ path: resolved.path, message: resolved.problem }]);
  if (!targetAllowed(connection.allowedTargets, resolved.arn)) {
    throw errors.targetNotAllowed(`Target '${resolved.arn}'`, callback.connection_id);
  }
  return target;
}

function messageTarget(callback: Exclude<Callback, { type: 'object_store' }>): MessageTarget {
  switch (callback.type) {
    case 'sqs':
      return { type: 'sqs', connection_id: callback.connection_id, queue_url: callback.queue_url };
    case 'sns':
      return { type: 'sns', connection_id: callback.connection_id, topic_arn: callback.topic_arn };
    case 'eventbridge':
      return {
        type: 'eventbridge',
        connection_id: callback.connection_id,
        event_bus_arn: callback.event_bus_arn,
        detail_type: callback.detail_type ?? DEFAULT_DETAIL_TYPE,
      };
  }
}
