/**
 * The inline session policy sent with AssumeRole (interface document 5, item 7). The temporary
 * credentials get the intersection of the role's own policy and this one, so whatever the role
 * allows, a delivery session can only put objects under the agreed prefix of one bucket.
 *
 * `kms:GenerateDataKey` is what S3 needs on the caller's behalf when the bucket encrypts by
 * default with a customer-managed key. It is granted only through S3 (`kms:ViaService`), and this
 * same policy lets S3 be asked for nothing but PutObject under the prefix: for a bucket without
 * such a key it is never used, for one with it, it is used for exactly these writes. Granting it
 * unconditionally saves a failed first write per bucket to find out whether the bucket needs it.
 */
export function sessionPolicyJson(bucket: string, keyPrefix: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'PutResultObjects',
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: `arn:aws:s3:::${bucket}/${keyPrefix}*`,
      },
      {
        Sid: 'EncryptThroughS3',
        Effect: 'Allow',
        Action: 'kms:GenerateDataKey',
        Resource: '*',
        Condition: { StringLike: { 'kms:ViaService': 's3.*.amazonaws.com' } },
      },
    ],
  });
}

/**
 * The session policy of a message target's delivery session: the one action (sqs:SendMessage,
 * sns:Publish, events:PutEvents) on the one resource. Queues and topics encrypted with a
 * customer-managed KMS key need the key through the service as well, like S3 (see above).
 */
export function messageSessionPolicyJson(action: string, resourceArn: string): string {
  const service = action.split(':')[0] as string;
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Sid: 'SendResultMessages', Effect: 'Allow', Action: action, Resource: resourceArn },
      ...(service === 'events'
        ? []
        : [
            {
              Sid: 'EncryptThroughService',
              Effect: 'Allow',
              Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
              Resource: '*',
              Condition: { StringLike: { 'kms:ViaService': `${service}.*.amazonaws.com` } },
            },
          ]),
    ],
  });
}

/** RoleSessionName: names the connection in the customer's CloudTrail ([\w+=,.@-], ≤ 64). */
export function roleSessionName(connectionId: string): string {
  return `barge-${connectionId}`.replace(/[^\w+=,.@-]/g, '-').slice(0, 64);
}
