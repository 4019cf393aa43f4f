import type { MailMessage } from '../../mail/mailer.js';
import type { Connection } from '../../store/connections.js';

/** The one mail of a connection incident: what failed, what to check, and that no more will come. */
export function incidentMail(input: {
  to: string;
  projectSlug: string;
  connection: Connection;
  bucket: string;
  cargoId: string | null;
  detail: string;
}): MailMessage {
  const { connection } = input;
  const access = connection.roleArn
    ? [
        `Role: ${connection.roleArn}`,
        `External id: ${connection.externalId}`,
        '',
        'Check that:',
        "- the role's trust policy lets barge's AWS principal assume it with this external id;",
        `- the role may s3:PutObject on ${input.bucket} under the agreed prefix;`,
        '- no bucket policy denies the write;',
        '- if the bucket encrypts with a customer-managed KMS key, the role may kms:GenerateDataKey on it.',
      ]
    : [
        `Endpoint: ${connection.endpointUrl ?? '(default S3 endpoint)'}`,
        '',
        'Check that the static credentials of this connection are still valid and may write to the bucket.',
      ];
  return {
    to: input.to,
    subject: `[barge] Object delivery connection ${connection.id} failed: access denied`,
    text: [
      `Object delivery for project '${input.projectSlug}' through connection ${connection.id} was denied.`,
      '',
      `Bucket: ${input.bucket}`,
      ...(input.cargoId ? [`Cargo: ${input.cargoId}`] : []),
      `Error: ${input.detail}`,
      '',
      ...access,
      '',
      'Deliveries keep being retried on their schedule; results stay available from GET /cargo/{id}/result.',
      `Run \`barge connection check ${connection.id} --bucket <bucket-arn>\` once fixed.`,
      'This is the only mail for this incident: the connection is marked failed until a delivery or a',
      'check through it succeeds again.',
    ].join('\n'),
  };
}
