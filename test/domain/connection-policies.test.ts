/** The policies a connection's customer puts on the role (domain/connection-policies.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectionPolicies, PRINCIPAL_PLACEHOLDER } from '../../src/domain/connection-policies.js';

const role = { roleArn: 'arn:aws:iam::444455556666:role/r', externalId: 'barge-X' };

test('a role with an allow-list: the trust policy names the principal and external id; one statement per target, buckets under the prefix', () => {
  const policies = connectionPolicies(
    {
      ...role,
      allowedTargets: [
        'arn:aws:s3:::results',
        'arn:aws:sqs:eu-west-1:444455556666:q',
        'arn:aws:sns:eu-west-1:444455556666:t',
        'arn:aws:events:eu-west-1:444455556666:event-bus/b',
      ],
    },
    'arn:aws:iam::111122223333:role/barge',
    'in/',
  );
  assert.deepEqual(policies?.placeholders, []);
  assert.deepEqual(policies?.trustPolicy.Statement, [
    {
      Effect: 'Allow',
      Principal: { AWS: 'arn:aws:iam::111122223333:role/barge' },
      Action: 'sts:AssumeRole',
      Condition: { StringEquals: { 'sts:ExternalId': 'barge-X' } },
    },
  ]);
  assert.deepEqual(
    policies?.permissionPolicy.Statement.map((s) => [s.Action, s.Resource]),
    [
      ['s3:PutObject', 'arn:aws:s3:::results/in/*'],
      ['sqs:SendMessage', 'arn:aws:sqs:eu-west-1:444455556666:q'],
      ['sns:Publish', 'arn:aws:sns:eu-west-1:444455556666:t'],
      ['events:PutEvents', 'arn:aws:events:eu-west-1:444455556666:event-bus/b'],
    ],
  );
});

test('what is not known is a placeholder, named: the principal, and each kind of target of a connection that allows any', () => {
  const policies = connectionPolicies({ ...role, allowedTargets: null }, null, 'convoy/');
  assert.ok(policies);
  assert.equal(policies.placeholders[0], PRINCIPAL_PLACEHOLDER);
  assert.equal(policies.placeholders.length, 5);
  assert.deepEqual((policies.trustPolicy.Statement[0] as { Principal: unknown }).Principal, {
    AWS: PRINCIPAL_PLACEHOLDER,
  });
  assert.equal(policies.permissionPolicy.Statement[0]?.Resource, 'arn:aws:s3:::<bucket>/convoy/*');
  for (const placeholder of policies.placeholders) {
    assert.ok(JSON.stringify(policies).includes(placeholder), placeholder);
  }
});

test('static credentials: no role, no policies', () => {
  assert.equal(connectionPolicies({ ...role, roleArn: null, allowedTargets: null }, null, 'convoy/'), null);
});
