/**
 * The capability check of a connection on one target: a bucket (writes `{prefix}svc-verify.json`)
 * or a queue, topic or event bus (sends one message marked `barge_verification`). Picks the kind
 * from the one target given, validates it and its allow-list, then runs the existing check, which
 * reports each capability and allows one real check per CHECK_INTERVAL_MS per connection (a
 * role-only probe writes and sends nothing and is not limited, and a check that could not assume
 * the role wrote nothing and does not count). A check that ran and failed is a
 * result (`report.ok` false), not a refusal.
 */
import type { Config } from '../config.js';
import type { MessageCheckReport } from '../delivery/messages/message-check.js';
import type { CheckReport } from '../delivery/object-store/capability-check.js';
import { CHECK_INTERVAL_MS, targetAllowed } from '../domain/connections.js';
import { DEFAULT_DETAIL_TYPE, type MessageTarget, resolveMessageTarget } from '../domain/message-targets.js';
import { bucketAllowed, DEFAULT_KEY_PREFIX, keyPrefixProblem, parseBucketArn } from '../domain/object-target.js';
import { type CapabilityCheckers, openAwsCapabilityCheckers } from './capability-checkers.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';
import { connectionOf } from './show-connection.js';

/** Exactly one target: `bucket` (with `keyPrefix`), `queueUrl`, `topicArn` or `eventBusArn` (with `detailType`). */
export interface CheckConnectionInput {
  connectionId: string;
  /** The connection's project: another project's connection is not found. */
  slug?: string;
  /** A bucket ARN, `arn:aws:s3:::<bucket>`. */
  bucket?: string;
  /** With `bucket`: the key prefix deliveries use (default DEFAULT_KEY_PREFIX). */
  keyPrefix?: string;
  queueUrl?: string;
  topicArn?: string;
  eventBusArn?: string;
  /** With `eventBusArn` (default DEFAULT_DETAIL_TYPE). */
  detailType?: string;
  /** Only assume the role: writes or sends nothing and is not rate limited. */
  roleOnly?: boolean;
}

export type CheckConnectionResult =
  | { kind: 'bucket'; bucketArn: string; report: CheckReport }
  | { kind: 'message'; report: MessageCheckReport };

export interface CheckConnectionDeps extends OperationDeps {
  config: Config;
  /** Opened only once the input is accepted; by default the AWS ones (loading the SDK then). */
  openCheckers?: () => Promise<CapabilityCheckers>;
}

export async function checkConnection(
  deps: CheckConnectionDeps,
  input: CheckConnectionInput,
): Promise<Result<CheckConnectionResult>> {
  const given = [input.bucket, input.queueUrl, input.topicArn, input.eventBusArn].filter((v) => v !== undefined);
  if (given.length !== 1) return refuse(refusals.invalidTarget());
  const found = await connectionOf(deps, input);
  if (!found.ok) return found;
  const { connection } = found.value;
  const roleOnly = input.roleOnly === true;
  const open = deps.openCheckers ?? (() => openAwsCapabilityCheckers(deps));

  if (input.bucket !== undefined) {
    const parsed = parseBucketArn(input.bucket);
    if ('problem' in parsed) return refuse(refusals.invalidBucket(input.bucket, parsed.problem));
    const keyPrefix = input.keyPrefix ?? DEFAULT_KEY_PREFIX;
    const problem = keyPrefixProblem(keyPrefix);
    if (problem) return refuse(refusals.invalidKeyPrefix(keyPrefix, problem));
    if (!bucketAllowed(connection.allowedTargets, parsed.bucket)) {
      return refuse(refusals.targetNotAllowed(`bucket '${input.bucket}'`, connection.id));
    }
    const checkers = await open();
    try {
      const report = await checkers.checkBucket({ connection, bucket: parsed.bucket, keyPrefix, roleOnly });
      if ('refused' in report) {
        return refuse(refusals.checkTooSoon(connection.id, CHECK_INTERVAL_MS, report.waitMs, 'write a real object'));
      }
      return succeed({ kind: 'bucket', bucketArn: input.bucket, report });
    } finally {
      checkers.close();
    }
  }

  const target: MessageTarget =
    input.queueUrl !== undefined
      ? { type: 'sqs', connection_id: connection.id, queue_url: input.queueUrl }
      : input.topicArn !== undefined
        ? { type: 'sns', connection_id: connection.id, topic_arn: input.topicArn }
        : {
            type: 'eventbridge',
            connection_id: connection.id,
            event_bus_arn: input.eventBusArn as string,
            detail_type: input.detailType ?? DEFAULT_DETAIL_TYPE,
          };
  const resolved = resolveMessageTarget(target, {
    sqsEndpointOverride: deps.config.awsEndpoints.sqs !== null,
    defaultRegion: deps.config.objectStore.region,
  });
  if ('problem' in resolved) {
    const field = resolved.path.replace('/callback/', '');
    const name = TARGET_INPUTS[field] ?? field;
    return refuse(
      refusals.invalidMessageTarget(name, String(input[name as keyof CheckConnectionInput] ?? ''), resolved.problem),
    );
  }
  if (!targetAllowed(connection.allowedTargets, resolved.arn)) {
    return refuse(refusals.targetNotAllowed(`'${resolved.arn}'`, connection.id));
  }
  const checkers = await open();
  try {
    const report = await checkers.checkMessageTarget({ connection, target, resolved, roleOnly });
    if ('refused' in report) {
      return refuse(refusals.checkTooSoon(connection.id, CHECK_INTERVAL_MS, report.waitMs, 'send a real message'));
    }
    return succeed({ kind: 'message', report });
  } finally {
    checkers.close();
  }
}

/** The input of each field of a message target, as resolveMessageTarget names it. */
const TARGET_INPUTS: Record<string, keyof CheckConnectionInput> = {
  queue_url: 'queueUrl',
  topic_arn: 'topicArn',
  event_bus_arn: 'eventBusArn',
  detail_type: 'detailType',
};
