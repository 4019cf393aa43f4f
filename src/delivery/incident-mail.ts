/** The incident mail of a delivery connection that was denied access: what failed and what to check. */
import type { MailMessage } from '../mail/mailer.js';
import type { Connection } from '../store/admin/connections.js';

/** What a connection was used for when access was denied, in the customer's words. */
export interface IncidentTarget {
  /** e.g. `bucket arn:aws:s3:::results`, `SQS queue https://sqs…/results`. */
  description: string;
  /** The one permission the role needs, e.g. `s3:PutObject on arn:aws:s3:::results/convoy/*`. */
  permission: string;
  /** Extra things to check for this kind of target (KMS keys, resource policies). */
  checks: string[];
}

/** The one mail of a connection incident: what failed, what to check, and that no more will come. */
export function incidentMail(input: {
  to: string;
  projectSlug: string;
  connection: Connection;
  target: IncidentTarget;
  cargoId: string | null;
  detail: string;
}): MailMessage {
  const { connection, target } = input;
  const access = connection.roleArn
    ? [
        `Role: ${connection.roleArn}`,
        `External id: ${connection.externalId}`,
        '',
        'Check that:',
        "- the role's trust policy lets barge's AWS principal assume it with this external id;",
        `- the role allows ${target.permission};`,
        ...target.checks.map((check) => `- ${check};`),
      ]
    : [
        `Endpoint: ${connection.endpointUrl ?? '(default endpoint)'}`,
        '',
        `Check that the static credentials of this connection are still valid and allow ${target.permission}.`,
      ];
  return {
    to: input.to,
    subject: `[barge] Delivery connection ${connection.id} failed: access denied`,
    text: [
      `Delivery for project '${input.projectSlug}' through connection ${connection.id} was denied.`,
      '',
      `Target: ${target.description}`,
      ...(input.cargoId ? [`Cargo: ${input.cargoId}`] : []),
      `Error: ${input.detail}`,
      '',
      ...access,
      '',
      'Deliveries keep being retried on their schedule; results stay available from GET /cargo/{id}/result.',
      `Run \`barge connection check ${connection.id}\` with the target once fixed.`,
      'This is the only mail for this incident: the connection is marked failed until a delivery or a',
      'check through it succeeds again.',
    ].join('\n'),
  };
}
