/**
 * Creates a delivery connection for a project: a role barge assumes (with an external id it makes
 * up for the customer's trust policy), or static credentials for an S3-compatible store, sealed
 * with the configured secret key, usually with an endpoint. An allow-list, when given, restricts
 * deliveries to those buckets, queues, topics and event buses.
 */
import type { Config } from '../config.js';
import { isRoleArn, newExternalId } from '../domain/connections.js';
import { newId } from '../domain/ids.js';
import { parseEventBusArn, parseQueueArn, parseTopicArn } from '../domain/message-targets.js';
import { bucketArn, parseBucketArn } from '../domain/object-target.js';
import { sealSecret } from '../domain/secret-box.js';
import { type Connection, insertConnection } from '../store/admin/connections.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import { type OperationDeps, type OperationError, type Result, refusals, refuse, succeed } from './operation.js';

export interface CreateConnectionInput {
  slug: string;
  /** A role: `arn:aws:iam::<account>:role/<name>`. Either this, or static credentials. */
  roleArn?: string;
  /** Static credentials: the access key id, with `secretAccessKey`. */
  accessKeyId?: string;
  /**
   * Static credentials: the secret access key, or how to get it. A function is called only once
   * everything else is accepted, so a refused request never reads (or prompts for) the secret.
   */
  secretAccessKey?: string | (() => Promise<string>);
  /** With static credentials: an S3-compatible endpoint, http(s) without credentials or query. */
  endpoint?: string;
  /** The signing region of the store (default: the configured one). */
  region?: string;
  /** ARNs of the buckets, queues, topics and event buses deliveries may target; none: any. */
  allow?: readonly string[];
}

export interface CreateConnectionDeps extends OperationDeps {
  config: Pick<Config, 'secretKey'>;
}

export async function createConnection(
  deps: CreateConnectionDeps,
  input: CreateConnectionInput,
): Promise<Result<{ connection: Connection; projectSlug: string }>> {
  const staticCredentials = input.accessKeyId !== undefined || input.secretAccessKey !== undefined;
  if ((input.roleArn === undefined) === !staticCredentials) return refuse(refusals.invalidAccess());
  if (input.roleArn !== undefined && !isRoleArn(input.roleArn)) return refuse(refusals.invalidRoleArn(input.roleArn));
  if (input.roleArn !== undefined && input.endpoint !== undefined) return refuse(refusals.endpointWithRole());
  if (input.region !== undefined && !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(input.region)) {
    return refuse(refusals.invalidRegion(input.region));
  }
  const allowedTargets = parseAllowList(input.allow ?? []);
  if ('error' in allowedTargets) return refuse(allowedTargets.error);
  const endpointUrl = input.endpoint === undefined ? null : parseEndpoint(input.endpoint);
  if (endpointUrl === undefined) return refuse(refusals.invalidEndpoint(input.endpoint as string));
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));

  const now = deps.clock.now();
  const id = newId('conn', now);
  let sealedCredentials: string | null = null;
  if (staticCredentials) {
    if (!input.accessKeyId || input.secretAccessKey === undefined) return refuse(refusals.incompleteCredentials());
    const secretKey = deps.config.secretKey;
    if (!secretKey) return refuse(refusals.secretKeyMissing());
    const secretAccessKey =
      typeof input.secretAccessKey === 'string' ? input.secretAccessKey : await input.secretAccessKey();
    if (secretAccessKey.trim() === '') return refuse(refusals.emptySecret());
    sealedCredentials = sealSecret(secretKey, JSON.stringify({ accessKeyId: input.accessKeyId, secretAccessKey }), id);
  }
  const connection = await insertConnection(deps.database, {
    id,
    projectId: project.id,
    roleArn: input.roleArn ?? null,
    externalId: newExternalId(),
    allowedTargets: allowedTargets.targets,
    endpointUrl,
    region: input.region ?? null,
    sealedCredentials,
    now,
  });
  return succeed({ connection, projectSlug: project.slug });
}

/** The allow-list as stored: each entry's canonical ARN, once; null when it is empty (any target). */
function parseAllowList(entries: readonly string[]): { targets: string[] | null } | { error: OperationError } {
  if (entries.length === 0) return { targets: null };
  const targets = new Set<string>();
  for (const entry of entries) {
    const parsed = parseTargetArn(entry);
    if (typeof parsed !== 'string') return { error: refusals.invalidAllowEntry(entry, parsed.problem) };
    targets.add(parsed);
  }
  return { targets: [...targets] };
}

/** An allow-list entry: the ARN of a bucket, queue, topic or event bus. */
function parseTargetArn(value: string): string | { problem: string } {
  const bucket = parseBucketArn(value);
  if (!('problem' in bucket)) return bucketArn(bucket.bucket);
  if (value.startsWith('arn:aws:s3:')) return bucket;
  for (const parse of [parseQueueArn, parseTopicArn, parseEventBusArn]) {
    const parsed = parse(value);
    if (!('problem' in parsed)) return parsed.arn;
  }
  return {
    problem:
      'give the ARN of a bucket (arn:aws:s3:::<bucket>), queue (arn:aws:sqs:…), topic (arn:aws:sns:…) or event bus (arn:aws:events:…:event-bus/…)',
  };
}

/** The endpoint without trailing slashes, or undefined when it is not an http(s) URL without credentials or query. */
function parseEndpoint(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    if ((url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.search) {
      return raw.replace(/\/+$/, '');
    }
  } catch {
    // not a URL
  }
  return undefined;
}
