/** The delivered object's body and metadata, and the session policy and session names of object delivery. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  deliveredObjectJson,
  deliveredObjectMetadata,
  resultUrl,
  VERIFICATION_BODY,
} from '../../src/domain/object-body.js';
import { roleSessionName, sessionPolicyJson } from '../../src/domain/session-policy.js';

describe('delivered object body', () => {
  const response = '{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3}}';

  test('success: fields in order, the stored texts verbatim, no error_message', () => {
    const body = deliveredObjectJson({
      cargoId: 'crg_1',
      success: true,
      responseJson: response,
      errorMessage: null,
      metadataJson: '{"z":1,"a":2.50}',
      resultUrl: 'https://barge.example/cargo/crg_1/result',
    });
    assert.equal(
      body,
      `{"cargo_id":"crg_1","success":true,"response":${response},"response_truncated":false,` +
        '"result_url":"https://barge.example/cargo/crg_1/result","metadata":{"z":1,"a":2.50}}',
    );
    assert.deepEqual(Object.keys(JSON.parse(body)), [
      'cargo_id',
      'success',
      'response',
      'response_truncated',
      'result_url',
      'metadata',
    ]);
  });

  test('failure: error_message present, response as stored, metadata null when none', () => {
    const body = deliveredObjectJson({
      cargoId: 'crg_2',
      success: false,
      responseJson: null,
      errorMessage: 'invalid_request_error: "quoted"',
      metadataJson: null,
      resultUrl: 'u',
    });
    assert.equal(
      body,
      '{"cargo_id":"crg_2","success":false,"response":null,"error_message":"invalid_request_error: \\"quoted\\"",' +
        '"response_truncated":false,"result_url":"u","metadata":null}',
    );
  });

  test('deterministic bytes: the same input gives the same body, whatever its size', () => {
    const big = JSON.stringify({ text: 'x'.repeat(3_000_000) });
    const input = {
      cargoId: 'crg_3',
      success: true,
      responseJson: big,
      errorMessage: null,
      metadataJson: null,
      resultUrl: 'u',
    };
    const a = deliveredObjectJson(input);
    assert.equal(a, deliveredObjectJson({ ...input }));
    assert.ok(a.length > 3_000_000);
    assert.equal(JSON.parse(a).response.text.length, 3_000_000);
  });

  test('metadata, result URL and the verification body', () => {
    assert.deepEqual(deliveredObjectMetadata('crg_1', true), { 'svc-cargo-id': 'crg_1', 'svc-success': 'true' });
    assert.deepEqual(deliveredObjectMetadata('crg_1', false), { 'svc-cargo-id': 'crg_1', 'svc-success': 'false' });
    assert.equal(resultUrl('https://barge.example/base', 'crg_1'), 'https://barge.example/base/cargo/crg_1/result');
    assert.deepEqual(JSON.parse(VERIFICATION_BODY), { convoy_verification: true });
  });
});

describe('session policy', () => {
  test('PutObject under the prefix of one bucket, KMS only through S3', () => {
    const policy = JSON.parse(sessionPolicyJson('customer-bucket', 'convoy/'));
    assert.equal(policy.Version, '2012-10-17');
    assert.deepEqual(policy.Statement, [
      {
        Sid: 'PutResultObjects',
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: 'arn:aws:s3:::customer-bucket/convoy/*',
      },
      {
        Sid: 'EncryptThroughS3',
        Effect: 'Allow',
        Action: 'kms:GenerateDataKey',
        Resource: '*',
        Condition: { StringLike: { 'kms:ViaService': 's3.*.amazonaws.com' } },
      },
    ]);
    assert.equal(JSON.parse(sessionPolicyJson('b', '')).Statement[0].Resource, 'arn:aws:s3:::b/*');
  });

  test('session names are within STS limits', () => {
    assert.equal(roleSessionName('conn_01abc'), 'barge-conn_01abc');
    assert.ok(roleSessionName(`conn_${'x'.repeat(100)}`).length <= 64);
  });
});
