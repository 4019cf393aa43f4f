import type { Command } from 'commander';
import { type Config, loadConfig } from '../config.js';
import type { AwsDeliveryDeps } from '../delivery/aws/connection-access.js';
import type { CapabilityResult, CheckReport } from '../delivery/object-store/capability-check.js';
import { type Clock, isoTime } from '../domain/clock.js';
import { CHECK_INTERVAL_MS, isRoleArn, newExternalId } from '../domain/connections.js';
import { newId } from '../domain/ids.js';
import {
  DEFAULT_DETAIL_TYPE,
  type MessageTarget,
  parseEventBusArn,
  parseQueueArn,
  parseTopicArn,
  resolveMessageTarget,
} from '../domain/message-targets.js';
import { bucketArn, DEFAULT_KEY_PREFIX, keyPrefixProblem, parseBucketArn } from '../domain/object-target.js';
import { sealSecret } from '../domain/secret-box.js';
import {
  type Connection,
  deleteConnection,
  findConnectionWithProject,
  insertConnection,
  listConnections,
} from '../store/connections.js';
import type { Database } from '../store/database.js';
import { findProjectBySlug } from '../store/projects.js';
import type { CommandContext } from './context.js';
import { CliError, type Output, print, table } from './output.js';

const maybeIso = (ms: number | null) => (ms === null ? null : isoTime(ms));

/** What is shown of a connection: never its static credentials, only that it has some. */
export function connectionJson(c: Connection, projectSlug: string) {
  return {
    id: c.id,
    project: projectSlug,
    kind: c.roleArn === null ? 'static_credentials' : 'assume_role',
    role_arn: c.roleArn,
    external_id: c.externalId,
    endpoint_url: c.endpointUrl,
    region: c.region,
    allowed_targets: c.allowedTargets,
    status: c.status,
    last_failure_reason: c.lastFailureReason,
    last_failed_at: maybeIso(c.lastFailedAt),
    last_check_at: maybeIso(c.lastCheckAt),
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
  };
}

function connectionText(c: Connection, projectSlug: string): string {
  const lines = [
    `Connection ${c.id} (project ${projectSlug})`,
    c.roleArn === null
      ? `  access:        static credentials (stored encrypted)${c.endpointUrl ? ` at ${c.endpointUrl}` : ''}`
      : `  role:          ${c.roleArn}`,
    `  external id:   ${c.externalId}`,
    ...(c.region ? [`  region:        ${c.region}`] : []),
    `  allowed:       ${c.allowedTargets ? c.allowedTargets.join(', ') : 'any target'}`,
    `  status:        ${c.status}`,
  ];
  if (c.lastFailedAt !== null) {
    lines.push(`  last failure:  ${isoTime(c.lastFailedAt)} ${c.lastFailureReason ?? ''}`.trimEnd());
  }
  if (c.lastCheckAt !== null) lines.push(`  last check:    ${isoTime(c.lastCheckAt)}`);
  return lines.join('\n');
}

/** The trust-policy condition the customer adds to the role (docs/object-delivery.md). */
function trustPolicyHint(c: Connection): string {
  const condition = JSON.stringify({ StringEquals: { 'sts:ExternalId': c.externalId } });
  return [
    '',
    "Add barge's AWS principal to the role's trust policy (action sts:AssumeRole) with this condition:",
    '',
    `    "Condition": ${condition}`,
    '',
    `Then run: barge connection check ${c.id} --bucket arn:aws:s3:::<bucket> (or --queue-url, --topic-arn, --event-bus-arn)`,
  ].join('\n');
}

/** An allow-list entry: the ARN of a bucket, queue, topic or event bus. */
function parseTargetArn(value: string): string {
  const bucket = parseBucketArn(value);
  if (!('problem' in bucket)) return bucketArn(bucket.bucket);
  if (value.startsWith('arn:aws:s3:')) throw new CliError(`invalid --allow '${value}': ${bucket.problem}`);
  for (const parse of [parseQueueArn, parseTopicArn, parseEventBusArn]) {
    const parsed = parse(value);
    if (!('problem' in parsed)) return parsed.arn;
  }
  throw new CliError(
    `invalid --allow '${value}': give the ARN of a bucket (arn:aws:s3:::<bucket>), queue (arn:aws:sqs:…), topic (arn:aws:sns:…) or event bus (arn:aws:events:…:event-bus/…)`,
  );
}

function parseTargets(values: string[]): string[] | null {
  if (values.length === 0) return null;
  return [...new Set(values.map(parseTargetArn))];
}

function parseEndpoint(raw: string): string {
  try {
    const url = new URL(raw);
    if ((url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.search) {
      return raw.replace(/\/+$/, '');
    }
  } catch {
    // reported below
  }
  throw new CliError(`invalid --endpoint '${raw}': use an http(s) URL without credentials or query`);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

const collect = (value: string, previous: string[]) => [...previous, value];

interface CreateOptions {
  roleArn?: string;
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKeyStdin?: boolean;
  allow: string[];
  json?: boolean;
}

export function registerConnectionCommands(program: Command, run: CommandContext['run']): void {
  const connection = program
    .command('connection')
    .description(
      "Manage delivery connections: a project's access to its customers' buckets, queues, topics and event buses",
    );

  connection
    .command('create <slug>')
    .description(
      'Create a connection: a role barge assumes (--role-arn), or static credentials for an S3-compatible store (--access-key-id with --secret-access-key-stdin, usually with --endpoint)',
    )
    .option('--role-arn <arn>', "the customer's IAM role, arn:aws:iam::<account>:role/<name>")
    .option(
      '--allow <arn>',
      'restrict deliveries to this bucket, queue, topic or event bus ARN (repeatable)',
      collect,
      [] as string[],
    )
    .option('--endpoint <url>', 'S3-compatible endpoint (MinIO, Ceph, R2); path-style addressing is used')
    .option('--region <region>', 'signing region for the store (default: BARGE_AWS_REGION)')
    .option('--access-key-id <id>', 'static credentials: the access key id')
    .option('--secret-access-key-stdin', 'static credentials: read the secret access key from standard input')
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: CreateOptions) =>
      run(opts, async ({ db, clock, out }) => {
        const staticCredentials = opts.accessKeyId !== undefined || opts.secretAccessKeyStdin === true;
        if ((opts.roleArn === undefined) === !staticCredentials) {
          throw new CliError(
            'give either --role-arn, or static credentials (--access-key-id and --secret-access-key-stdin)',
          );
        }
        if (opts.roleArn !== undefined && !isRoleArn(opts.roleArn)) {
          throw new CliError(`invalid --role-arn '${opts.roleArn}': use arn:aws:iam::<12-digit account>:role/<name>`);
        }
        if (opts.roleArn !== undefined && opts.endpoint !== undefined) {
          throw new CliError('--endpoint goes with static credentials; a role connection uses BARGE_AWS_S3_ENDPOINT');
        }
        if (opts.region !== undefined && !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(opts.region)) {
          throw new CliError(`invalid --region '${opts.region}'`);
        }
        const allowedTargets = parseTargets(opts.allow);
        const endpointUrl = opts.endpoint === undefined ? null : parseEndpoint(opts.endpoint);
        const project = await findProjectBySlug(db, slug);
        if (!project) throw new CliError(`no project '${slug}'`);

        const now = clock.now();
        const id = newId('conn', now);
        let sealedCredentials: string | null = null;
        if (staticCredentials) {
          if (!opts.accessKeyId || !opts.secretAccessKeyStdin) {
            throw new CliError('static credentials need both --access-key-id and --secret-access-key-stdin');
          }
          const secretKey = loadConfig().secretKey;
          if (!secretKey) {
            throw new CliError(
              'BARGE_SECRET_KEY must be set to store static credentials (32 bytes, e.g. from `openssl rand -hex 32`)',
            );
          }
          const secretAccessKey = await readStdin();
          if (secretAccessKey === '') throw new CliError('no secret access key on standard input');
          sealedCredentials = sealSecret(
            secretKey,
            JSON.stringify({ accessKeyId: opts.accessKeyId, secretAccessKey }),
            id,
          );
        }
        const created = await insertConnection(db, {
          id,
          projectId: project.id,
          roleArn: opts.roleArn ?? null,
          externalId: newExternalId(),
          allowedTargets,
          endpointUrl,
          region: opts.region ?? null,
          sealedCredentials,
          now,
        });
        print(
          out,
          connectionJson(created, slug),
          () =>
            `Created ${connectionText(created, slug)}` +
            (created.roleArn === null ? '' : `\n${trustPolicyHint(created)}`),
        );
      }),
    );

  connection
    .command('list <slug>')
    .description("List a project's connections")
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { json?: boolean }) =>
      run(opts, async ({ db, out }) => {
        const project = await findProjectBySlug(db, slug);
        if (!project) throw new CliError(`no project '${slug}'`);
        const connections = await listConnections(db, project.id);
        print(out, { connections: connections.map((c) => connectionJson(c, slug)) }, () =>
          table(
            ['ID', 'ACCESS', 'STATUS', 'ALLOWED', 'CREATED'],
            connections.map((c) => [
              c.id,
              c.roleArn ?? `static${c.endpointUrl ? ` @ ${c.endpointUrl}` : ''}`,
              c.status,
              c.allowedTargets ? c.allowedTargets.join(',') : 'any',
              isoTime(c.createdAt),
            ]),
          ),
        );
      }),
    );

  connection
    .command('show <connection-id>')
    .description('Show a connection (its external id, status and last failure; never its credentials)')
    .option('--json', 'print one JSON object')
    .action((connectionId: string, opts: { json?: boolean }) =>
      run(opts, async ({ db, out }) => {
        const found = await findConnectionWithProject(db, connectionId);
        if (!found) throw new CliError(`no connection '${connectionId}'`);
        print(out, connectionJson(found.connection, found.projectSlug), () =>
          connectionText(found.connection, found.projectSlug),
        );
      }),
    );

  connection
    .command('delete <connection-id>')
    .description('Delete a connection; deliveries still naming it fail with connection_not_found')
    .option('--json', 'print one JSON object')
    .action((connectionId: string, opts: { json?: boolean }) =>
      run(opts, async ({ db, out }) => {
        if (!(await deleteConnection(db, connectionId))) throw new CliError(`no connection '${connectionId}'`);
        print(out, { id: connectionId, deleted: true }, () => `Connection ${connectionId} deleted`);
      }),
    );

  connection
    .command('check <connection-id>')
    .description(
      `Capability check: assume the role and write {prefix}svc-verify.json, or send one marked message (attribute or detail barge_verification), reporting each capability (at most one per ${CHECK_INTERVAL_MS / 1000} s per connection)`,
    )
    .option('--bucket <bucket-arn>', 'an object-store target, arn:aws:s3:::<bucket>')
    .option('--prefix <prefix>', `with --bucket: the key prefix deliveries use (default ${DEFAULT_KEY_PREFIX})`)
    .option('--queue-url <url>', 'an SQS target')
    .option('--topic-arn <arn>', 'an SNS target')
    .option('--event-bus-arn <arn>', 'an EventBridge target')
    .option('--detail-type <type>', `with --event-bus-arn (default ${DEFAULT_DETAIL_TYPE})`)
    .option('--role-only', 'only assume the role: writes or sends nothing and is not rate limited')
    .option('--json', 'print one JSON object')
    .action((connectionId: string, opts: CheckOptions) =>
      run(opts, async ({ database, clock, out }) => {
        const config = loadConfig();
        const given = [opts.bucket, opts.queueUrl, opts.topicArn, opts.eventBusArn].filter((v) => v !== undefined);
        if (given.length !== 1) {
          throw new CliError('give one target: --bucket, --queue-url, --topic-arn or --event-bus-arn');
        }
        const found = await findConnectionWithProject(database.write, connectionId);
        if (!found) throw new CliError(`no connection '${connectionId}'`);
        const { connection: conn } = found;
        // Loaded here, not at the top: the AWS SDK would slow every other admin command down.
        const { awsDeliveryDeps } = await import('../delivery/aws/connection-access.js');
        const aws = awsDeliveryDeps(config);
        try {
          if (opts.bucket !== undefined) await checkBucket(opts, conn, { database, clock, out, config, aws });
          else await checkMessage(opts, conn, { database, clock, out, config, aws });
        } finally {
          aws.clients.destroy();
        }
      }),
    );
}

interface CheckOptions {
  bucket?: string;
  prefix?: string;
  queueUrl?: string;
  topicArn?: string;
  eventBusArn?: string;
  detailType?: string;
  roleOnly?: boolean;
  json?: boolean;
}

interface CheckContext {
  database: Database;
  clock: Clock;
  out: Output;
  config: Config;
  aws: AwsDeliveryDeps;
}

function refusedCheck(
  connectionId: string,
  waitMs: number,
  what: 'write a real object' | 'send a real message',
): CliError {
  return new CliError(
    `a capability check of ${connectionId} ran less than ${CHECK_INTERVAL_MS / 1000} s ago (checks ${what}): wait ${Math.ceil(waitMs / 1000)} s`,
  );
}

async function checkBucket(opts: CheckOptions, conn: Connection, ctx: CheckContext): Promise<void> {
  const bucket = opts.bucket as string;
  const parsed = parseBucketArn(bucket);
  if ('problem' in parsed) throw new CliError(`invalid --bucket '${bucket}': ${parsed.problem}`);
  const keyPrefix = opts.prefix ?? DEFAULT_KEY_PREFIX;
  const problem = keyPrefixProblem(keyPrefix);
  if (problem) throw new CliError(`invalid --prefix '${keyPrefix}': ${problem}`);
  if (conn.allowedTargets && !conn.allowedTargets.includes(bucketArn(parsed.bucket))) {
    throw new CliError(`bucket '${bucket}' is not on the allow-list of ${conn.id}`);
  }
  const { bucketWriterFromConfig } = await import('../delivery/object-store/bucket-writer.js');
  const { checkConnection } = await import('../delivery/object-store/capability-check.js');
  const writer = bucketWriterFromConfig(ctx.config, ctx.aws);
  const result = await checkConnection(
    { database: ctx.database, clock: ctx.clock, writer },
    { connection: conn, bucket: parsed.bucket, keyPrefix, roleOnly: opts.roleOnly === true },
  );
  if ('refused' in result) throw refusedCheck(conn.id, result.waitMs, 'write a real object');
  print(ctx.out, checkJson(result, bucket), () => checkText(result, bucket));
  if (!result.ok) process.exitCode = 1;
}

async function checkMessage(opts: CheckOptions, conn: Connection, ctx: CheckContext): Promise<void> {
  const target: MessageTarget =
    opts.queueUrl !== undefined
      ? { type: 'sqs', connection_id: conn.id, queue_url: opts.queueUrl }
      : opts.topicArn !== undefined
        ? { type: 'sns', connection_id: conn.id, topic_arn: opts.topicArn }
        : {
            type: 'eventbridge',
            connection_id: conn.id,
            event_bus_arn: opts.eventBusArn as string,
            detail_type: opts.detailType ?? DEFAULT_DETAIL_TYPE,
          };
  const resolved = resolveMessageTarget(target, {
    sqsEndpointOverride: ctx.config.awsEndpoints.sqs !== null,
    defaultRegion: ctx.config.objectStore.region,
  });
  if ('problem' in resolved)
    throw new CliError(`invalid ${resolved.path.replace('/callback/', '')}: ${resolved.problem}`);
  if (conn.allowedTargets && !conn.allowedTargets.includes(resolved.arn)) {
    throw new CliError(`'${resolved.arn}' is not on the allow-list of ${conn.id}`);
  }
  const { messageTargetKinds } = await import('../delivery/registry.js');
  const { checkMessageTarget } = await import('../delivery/messages/message-check.js');
  const result = await checkMessageTarget(
    { database: ctx.database, clock: ctx.clock, aws: ctx.aws },
    messageTargetKinds[target.type],
    { connection: conn, target, resolved, roleOnly: opts.roleOnly === true },
  );
  if ('refused' in result) throw refusedCheck(conn.id, result.waitMs, 'send a real message');
  const { assumeRole, send } = result.capabilities;
  print(
    ctx.out,
    {
      connection_id: result.connectionId,
      target: result.target,
      ok: result.ok,
      capabilities: { assume_role: assumeRole, send },
    },
    () =>
      [
        `Capability check of ${result.connectionId} on ${result.target}: ${result.ok ? 'passed' : 'FAILED'}`,
        capabilityLine('assume role', assumeRole),
        capabilityLine('send', send),
      ].join('\n'),
  );
  if (!result.ok) process.exitCode = 1;
}

const capabilityLine = (name: string, c: CapabilityResult) => `  ${name.padEnd(16)} ${c.status.padEnd(9)} ${c.detail}`;

function checkJson(report: CheckReport, bucket: string) {
  const { assumeRole, putObject, encryptionKey } = report.capabilities;
  return {
    connection_id: report.connectionId,
    bucket_arn: bucket,
    key: report.key,
    ok: report.ok,
    capabilities: { assume_role: assumeRole, put_object: putObject, encryption_key: encryptionKey },
  };
}

function checkText(report: CheckReport, bucket: string): string {
  const line = capabilityLine;
  const { assumeRole, putObject, encryptionKey } = report.capabilities;
  return [
    `Capability check of ${report.connectionId} on ${bucket}${report.key ? ` (${report.key})` : ''}: ${report.ok ? 'passed' : 'FAILED'}`,
    line('assume role', assumeRole),
    line('put object', putObject),
    line('encryption key', encryptionKey),
  ].join('\n');
}
