/**
 * The IAM policies a customer puts on the role of a connection (README, "Object delivery" and
 * docs/message-targets.md): the trust policy that lets barge's principal assume it with the
 * connection's external id, and a permission policy with the one write or send action on each
 * target the connection allows. What is not known (barge's principal when not configured, the
 * targets of a connection that allows any) is a placeholder, named so a person can fill it in.
 */

export interface ConnectionPolicies {
  principalArn: string | null;
  trustPolicy: PolicyDocument;
  permissionPolicy: PolicyDocument;
  /** The placeholders left in the policies; empty: ready to paste. */
  placeholders: string[];
}

export interface PolicyDocument {
  Version: '2012-10-17';
  Statement: Record<string, unknown>[];
}

export const PRINCIPAL_PLACEHOLDER = "<barge's AWS principal ARN>";

/** The one action a delivery session may take on each kind of target (domain/session-policy.ts narrows it further). */
const ACTIONS: Record<string, { action: string; placeholder: string }> = {
  s3: { action: 's3:PutObject', placeholder: 'arn:aws:s3:::<bucket>' },
  sqs: { action: 'sqs:SendMessage', placeholder: 'arn:aws:sqs:<region>:<account>:<queue>' },
  sns: { action: 'sns:Publish', placeholder: 'arn:aws:sns:<region>:<account>:<topic>' },
  events: { action: 'events:PutEvents', placeholder: 'arn:aws:events:<region>:<account>:event-bus/<name>' },
};

/**
 * The policies of a role connection; null for static credentials (no role: their own store's
 * policy language grants PutObject). `keyPrefix` is the prefix bucket deliveries use.
 */
export function connectionPolicies(
  connection: { roleArn: string | null; externalId: string; allowedTargets: readonly string[] | null },
  principalArn: string | null,
  keyPrefix: string,
): ConnectionPolicies | null {
  if (connection.roleArn === null) return null;
  const placeholders: string[] = principalArn === null ? [PRINCIPAL_PLACEHOLDER] : [];
  const trustPolicy: PolicyDocument = {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: principalArn ?? PRINCIPAL_PLACEHOLDER },
        Action: 'sts:AssumeRole',
        Condition: { StringEquals: { 'sts:ExternalId': connection.externalId } },
      },
    ],
  };
  // Any target: one statement per kind, each with a placeholder (keep the ones you use).
  const targets = connection.allowedTargets ?? Object.values(ACTIONS).map((kind) => kind.placeholder);
  if (connection.allowedTargets === null) placeholders.push(...targets);
  const permissionPolicy: PolicyDocument = {
    Version: '2012-10-17',
    Statement: targets.map((arn) => {
      const service = arn.split(':')[2] ?? '';
      const action = ACTIONS[service]?.action ?? 's3:PutObject';
      return { Effect: 'Allow', Action: action, Resource: service === 's3' ? `${arn}/${keyPrefix}*` : arn };
    }),
  };
  return { principalArn, trustPolicy, permissionPolicy, placeholders };
}
