/** Object targets and connections: key prefixes, bucket ARNs, allow-lists, external ids, role ARNs, mail addresses. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isEmailAddress, isRoleArn, newExternalId } from '../../src/domain/connections.js';
import {
  bucketAllowed,
  DEFAULT_KEY_PREFIX,
  keyPrefixProblem,
  parseBucketArn,
  parseStoredTarget,
  resultObjectKey,
  verificationObjectKey,
} from '../../src/domain/object-target.js';

describe('key prefix rules', () => {
  test('the default is convoy/ and the empty prefix means the bucket root', () => {
    assert.equal(DEFAULT_KEY_PREFIX, 'convoy/');
    assert.equal(keyPrefixProblem(''), null);
    assert.equal(keyPrefixProblem(DEFAULT_KEY_PREFIX), null);
    assert.equal(resultObjectKey('', 'crg_x'), 'crg_x.json');
    assert.equal(resultObjectKey('convoy/', 'crg_x'), 'convoy/crg_x.json');
    assert.equal(verificationObjectKey('a/b/'), 'a/b/svc-verify.json');
  });

  test("accepted: letters, digits and !-_.'() with / separators, ending in /", () => {
    for (const prefix of ['a/', 'A9/', "!-_.'()/", 'x/y/z/', '.hidden/', 'a..b/', '...a/']) {
      assert.equal(keyPrefixProblem(prefix), null, prefix);
    }
  });

  test('refused, each with its reason', () => {
    const cases: [string, RegExp][] = [
      ['a', /must end with '\/'/],
      ['/a/', /must not start with '\/'/],
      ['a/../', /'\.\.' segment/],
      ['../', /'\.\.' segment/],
      ['a/b/../c/', /'\.\.' segment/],
      ['a b/', /may contain only/],
      ['a\tb/', /may contain only/],
      ['é/', /may contain only/],
      ['a&b/', /may contain only/],
      ['a$/', /may contain only/],
      ['a{}/', /may contain only/],
      // IAM wildcards would widen the session policy past the prefix.
      ['*/', /may contain only/],
      ['a?/', /may contain only/],
      ['./', /'\.' or '\.\.' segment/],
      ['a/./', /'\.' or '\.\.' segment/],
      ['a//', /empty segment/],
      [`${'x'.repeat(989)}/`, /at most 989 bytes/],
    ];
    for (const [prefix, reason] of cases) assert.match(keyPrefixProblem(prefix) ?? '', reason, JSON.stringify(prefix));
    assert.equal(keyPrefixProblem(`${'x'.repeat(988)}/`), null, '989 bytes is the most');
  });
});

describe('bucket ARNs', () => {
  test('a bucket ARN gives its bucket', () => {
    assert.deepEqual(parseBucketArn('arn:aws:s3:::my-bucket'), { bucket: 'my-bucket' });
    assert.deepEqual(parseBucketArn('arn:aws:s3:::a.b-c.123'), { bucket: 'a.b-c.123' });
  });

  test('a key path, another form or an invalid bucket name is refused', () => {
    assert.match((parseBucketArn('arn:aws:s3:::bucket/key') as { problem: string }).problem, /without a key path/);
    for (const arn of [
      'bucket',
      's3://bucket',
      'arn:aws:s3:eu-west-1::bucket',
      'arn:aws-cn:s3:::bucket',
      'arn:aws:s3:::Bucket',
      'arn:aws:s3:::ab',
      `arn:aws:s3:::${'a'.repeat(64)}`,
      'arn:aws:s3:::-bucket',
      'arn:aws:s3:::bucket-',
      'arn:aws:s3:::a..b',
      'arn:aws:s3:::a.-b',
      'arn:aws:s3:::10.0.0.1',
      'arn:aws:s3:::xn--bucket',
      'arn:aws:s3:::bucket-s3alias',
      'arn:aws:s3:::under_score',
    ]) {
      assert.ok('problem' in parseBucketArn(arn), arn);
    }
  });

  test('allow-lists compare bucket ARNs; no list allows any bucket', () => {
    assert.equal(bucketAllowed(null, 'any'), true);
    assert.equal(bucketAllowed(['arn:aws:s3:::one'], 'one'), true);
    assert.equal(bucketAllowed(['arn:aws:s3:::one'], 'two'), false);
    assert.equal(bucketAllowed([], 'one'), false);
  });

  test('a stored target reads back with its bucket; anything else is null', () => {
    assert.deepEqual(
      parseStoredTarget(
        '{"type":"object_store","connection_id":"conn_1","bucket_arn":"arn:aws:s3:::b-1","key_prefix":""}',
      ),
      { type: 'object_store', connection_id: 'conn_1', bucket_arn: 'arn:aws:s3:::b-1', key_prefix: '', bucket: 'b-1' },
    );
    assert.equal(parseStoredTarget(null), null);
    assert.equal(parseStoredTarget('not json'), null);
    assert.equal(parseStoredTarget('{"connection_id":"c","bucket_arn":"nope"}'), null);
  });
});

describe('connections', () => {
  test('external ids are long, random and in STS’s alphabet', () => {
    const a = newExternalId();
    assert.match(a, /^barge-[A-Za-z0-9]{32}$/);
    assert.notEqual(a, newExternalId());
  });

  test('role ARNs', () => {
    assert.ok(isRoleArn('arn:aws:iam::123456789012:role/barge-delivery'));
    assert.ok(isRoleArn('arn:aws:iam::123456789012:role/path/to/Role+=,.@-'));
    for (const bad of ['arn:aws:iam::123:role/x', 'arn:aws:iam::123456789012:user/x', 'role/x', 'arn:aws:s3:::b']) {
      assert.ok(!isRoleArn(bad), bad);
    }
  });

  test('notification addresses', () => {
    assert.ok(isEmailAddress('ops@example.com'));
    assert.ok(isEmailAddress('first.last+tag@sub.example.co'));
    for (const bad of ['ops', 'ops@', '@example.com', 'a b@example.com', 'Ops <ops@example.com>', 'ops@localhost']) {
      assert.ok(!isEmailAddress(bad), bad);
    }
  });
});
