/** `barge connection …`: create, list, show, delete and check connections; thin adapters over src/operations/. */
import type { Command } from 'commander';
import type { MessageCheckReport } from '../delivery/messages/message-check.js';
import type { CapabilityResult, CheckReport } from '../delivery/object-store/capability-check.js';
import { isoTime } from '../domain/clock.js';
import { CHECK_INTERVAL_MS } from '../domain/connections.js';
import { DEFAULT_DETAIL_TYPE } from '../domain/message-targets.js';
import { DEFAULT_KEY_PREFIX } from '../domain/object-target.js';
import { checkConnection } from '../operations/check-connection.js';
import { connectionView } from '../operations/connection-view.js';
import { createConnection } from '../operations/create-connection.js';
import { deleteConnection } from '../operations/delete-connection.js';
import { listConnections } from '../operations/list-connections.js';
import { type Connection, showConnection } from '../operations/show-connection.js';
import type { CommandContext } from './context.js';
import { print, table, unwrap } from './output.js';

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
      run(opts, async ({ out, ...deps }) => {
        const { connection: created, projectSlug } = unwrap(
          await createConnection(deps, {
            slug,
            roleArn: opts.roleArn,
            accessKeyId: opts.accessKeyId,
            secretAccessKey: opts.secretAccessKeyStdin ? readStdin : undefined,
            endpoint: opts.endpoint,
            region: opts.region,
            allow: opts.allow,
          }),
          CREATE_FLAGS,
        );
        print(
          out,
          connectionView(created, projectSlug, deps.clock.now()),
          () =>
            `Created ${connectionText(created, projectSlug)}` +
            (created.roleArn === null ? '' : `\n${trustPolicyHint(created)}`),
        );
      }),
    );

  connection
    .command('list <slug>')
    .description("List a project's connections")
    .option('--json', 'print one JSON object')
    .action((slug: string, opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const { connections } = unwrap(await listConnections(deps, { slug }));
        print(out, { connections: connections.map((c) => connectionView(c, slug, deps.clock.now())) }, () =>
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
      run(opts, async ({ out, ...deps }) => {
        const found = unwrap(await showConnection(deps, { connectionId }));
        print(out, connectionView(found.connection, found.projectSlug, deps.clock.now()), () =>
          connectionText(found.connection, found.projectSlug),
        );
      }),
    );

  connection
    .command('delete <connection-id>')
    .description('Delete a connection; its pending deliveries fail at once with connection_not_found')
    .option('--json', 'print one JSON object')
    .action((connectionId: string, opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        unwrap(await deleteConnection(deps, { connectionId }));
        print(out, { id: connectionId, deleted: true }, () => `Connection ${connectionId} deleted`);
      }),
    );

  connection
    .command('check <connection-id>')
    .description(
      `Capability check: assume the role and write {prefix}svc-verify.json, or send one marked message (attribute or detail barge_verification), reporting each capability (at most one per ${CHECK_INTERVAL_MS / 1000} s per connection; one that could not assume the role does not count)`,
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
      run(opts, async ({ out, ...deps }) => {
        const checked = unwrap(
          await checkConnection(deps, {
            connectionId,
            bucket: opts.bucket,
            keyPrefix: opts.prefix,
            queueUrl: opts.queueUrl,
            topicArn: opts.topicArn,
            eventBusArn: opts.eventBusArn,
            detailType: opts.detailType,
            roleOnly: opts.roleOnly === true,
          }),
          CHECK_FLAGS,
        );
        if (checked.kind === 'bucket') {
          print(out, checkJson(checked.report, checked.bucketArn), () => checkText(checked.report, checked.bucketArn));
        } else {
          print(out, messageCheckJson(checked.report), () => messageCheckText(checked.report));
        }
        if (!checked.report.ok) process.exitCode = 1;
      }),
    );
}

/** The inputs of createConnection by their flags (the rest of its refusals name no input). */
const CREATE_FLAGS = { roleArn: '--role-arn', region: '--region', allow: '--allow', endpoint: '--endpoint' };
const CHECK_FLAGS = { bucket: '--bucket', keyPrefix: '--prefix' };

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

function messageCheckJson(report: MessageCheckReport) {
  const { assumeRole, send } = report.capabilities;
  return {
    connection_id: report.connectionId,
    target: report.target,
    ok: report.ok,
    capabilities: { assume_role: assumeRole, send },
  };
}

function messageCheckText(report: MessageCheckReport): string {
  const { assumeRole, send } = report.capabilities;
  return [
    `Capability check of ${report.connectionId} on ${report.target}: ${report.ok ? 'passed' : 'FAILED'}`,
    capabilityLine('assume role', assumeRole),
    capabilityLine('send', send),
  ].join('\n');
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
