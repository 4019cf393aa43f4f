/** The webhook body: its keys in order, the stored texts as they are, failures, and the same bytes on every attempt. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { webhookPayloadJson } from '../../src/domain/envelope.js';
import { WEBHOOK_PAYLOAD_KEYS } from '../helpers/wire-keys.js';

const RESPONSE =
  '{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi \\u00e9 \\"q\\""}],"model":"svc-mock","stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}';

describe('webhookPayloadJson (interface document 6.1, 6.2)', () => {
  test('success: the keys in order, the stored response and metadata texts as they are, no error', () => {
    const metadata = '{"z":1,"a":{"n":12345678901234567890123},"é":"日本"}';
    const body = webhookPayloadJson({
      cargoId: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
      success: true,
      responseJson: RESPONSE,
      errorMessage: null,
      metadataJson: metadata,
    });
    assert.equal(
      body,
      `{"cargo_id":"crg_01jd5q3k8m9x2v4w6y8z0a1b2c","success":true,"response":${RESPONSE},"error":null,"error_message":null,"metadata":${metadata}}`,
    );
    const parsed = JSON.parse(body);
    assert.deepEqual(Object.keys(parsed), WEBHOOK_PAYLOAD_KEYS);
    assert.equal(parsed.response.content[0].text, 'Hi é "q"');
  });

  test('failure: response null, error and error_message the same text, metadata still echoed', () => {
    const message = 'invalid_request_error: "max_tokens" too large\nsecond line';
    const body = webhookPayloadJson({
      cargoId: 'crg_x',
      success: false,
      responseJson: RESPONSE, // never sent on failure
      errorMessage: message,
      metadataJson: '{"order":"B-2"}',
    });
    const parsed = JSON.parse(body);
    assert.deepEqual(parsed, {
      cargo_id: 'crg_x',
      success: false,
      response: null,
      error: message,
      error_message: message,
      metadata: { order: 'B-2' },
    });
  });

  test('a failure without a stored message still says it failed; no metadata is null', () => {
    const parsed = JSON.parse(
      webhookPayloadJson({
        cargoId: 'crg_y',
        success: false,
        responseJson: null,
        errorMessage: null,
        metadataJson: null,
      }),
    );
    assert.equal(parsed.error, 'failed');
    assert.equal(parsed.error_message, 'failed');
    assert.equal(parsed.metadata, null);
  });

  test('the same input gives the same bytes (every attempt signs the same body)', () => {
    const input = {
      cargoId: 'crg_z',
      success: true,
      responseJson: RESPONSE,
      errorMessage: null,
      metadataJson: '{"a":1}',
    };
    assert.equal(webhookPayloadJson(input), webhookPayloadJson({ ...input }));
  });
});
