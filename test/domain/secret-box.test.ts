/** Secrets sealed at rest under BARGE_SECRET_KEY, and the object delivery settings of the configuration. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openSecret, parseSecretKey, sealSecret } from '../../src/domain/secret-box.js';

describe('secrets at rest', () => {
  const key = randomBytes(32);

  test('a sealed secret opens with the same key for the same row only', () => {
    const sealed = sealSecret(key, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'conn_1');
    assert.ok(!sealed.includes('wJalrXUtnFEMI'));
    assert.notEqual(sealed, sealSecret(key, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'conn_1'), 'fresh nonce');
    assert.equal(openSecret(key, sealed, 'conn_1'), 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');
    assert.equal(openSecret(key, sealed, 'conn_2'), null, 'bound to its row');
    assert.equal(openSecret(randomBytes(32), sealed, 'conn_1'), null, 'another key');
    const [v, iv, tag, body] = sealed.split(':');
    const flipped = Buffer.from(body as string, 'base64');
    flipped[0] = (flipped[0] as number) ^ 1;
    assert.equal(openSecret(key, [v, iv, tag, flipped.toString('base64')].join(':'), 'conn_1'), null, 'altered');
    assert.equal(openSecret(key, 'garbage', 'conn_1'), null);
  });

  test('BARGE_SECRET_KEY: 64 hex characters or base64 of 32 bytes; never echoed when wrong', () => {
    assert.equal(parseSecretKey(key.toString('hex'))?.equals(key), true);
    assert.equal(parseSecretKey(key.toString('base64'))?.equals(key), true);
    assert.equal(parseSecretKey(key.toString('base64url'))?.equals(key), true);
    assert.equal(parseSecretKey('abc'), null);
    assert.equal(parseSecretKey(randomBytes(16).toString('hex')), null);
    assert.ok(loadConfig({ BARGE_SECRET_KEY: key.toString('hex') }).secretKey?.equals(key));
    assert.equal(loadConfig({}).secretKey, null);
    assert.throws(
      () => loadConfig({ BARGE_SECRET_KEY: 'hunter2-not-a-key' }),
      (err: Error) =>
        err instanceof ConfigError && /BARGE_SECRET_KEY/.test(err.message) && !/hunter2/.test(err.message),
    );
  });
});

describe('object delivery configuration', () => {
  test('defaults', () => {
    const config = loadConfig({});
    assert.deepEqual(config.objectStore, {
      region: 'us-east-1',
      s3Endpoint: null,
      stsEndpoint: null,
      forcePathStyle: false,
      sessionSeconds: 3600,
      attemptTimeoutMs: 60_000,
      throttleBaseDelayMs: 200,
      throttleRetries: 8,
      credentials: null,
      principalArn: null,
    });
    assert.equal(config.publicBaseUrl, 'http://localhost:8080');
    assert.equal(loadConfig({ PORT: '9000' }).publicBaseUrl, 'http://localhost:9000');
    assert.deepEqual(config.smtp, { url: null, from: 'barge <barge@localhost>' });
  });

  test('values', () => {
    const config = loadConfig({
      BARGE_AWS_REGION: 'eu-west-3',
      BARGE_AWS_S3_ENDPOINT: 'http://127.0.0.1:9000/',
      BARGE_AWS_STS_ENDPOINT: 'https://sts.eu-west-3.amazonaws.com',
      BARGE_AWS_S3_FORCE_PATH_STYLE: 'true',
      BARGE_PUBLIC_BASE_URL: 'https://batch.example.com/barge/',
      BARGE_SMTP_URL: 'smtps://user:pw@mail.example.com:465',
      BARGE_SMTP_FROM: 'ops@example.com',
    });
    assert.equal(config.objectStore.region, 'eu-west-3');
    assert.equal(config.objectStore.s3Endpoint, 'http://127.0.0.1:9000');
    assert.equal(config.objectStore.stsEndpoint, 'https://sts.eu-west-3.amazonaws.com');
    assert.equal(config.objectStore.forcePathStyle, true);
    assert.equal(config.publicBaseUrl, 'https://batch.example.com/barge');
    assert.equal(config.smtp.url, 'smtps://user:pw@mail.example.com:465');
    assert.equal(config.smtp.from, 'ops@example.com');
  });

  test('bad values name their variable; the SMTP URL is not echoed', () => {
    for (const [name, value] of [
      ['BARGE_AWS_S3_ENDPOINT', 'ftp://x'],
      ['BARGE_AWS_S3_ENDPOINT', 'http://user:pw@x'],
      ['BARGE_AWS_STS_ENDPOINT', 'not a url'],
      ['BARGE_AWS_REGION', 'EU_WEST'],
      ['BARGE_AWS_SESSION_SECONDS', '899'],
      ['BARGE_AWS_SESSION_SECONDS', '43201'],
      ['BARGE_PUBLIC_BASE_URL', 'barge.example.com'],
      ['BARGE_PUBLIC_BASE_URL', 'https://x/?q=1'],
      ['BARGE_SMTP_FROM', 'nobody'],
      ['BARGE_OBJECT_DELIVERY_TIMEOUT_MS', '10'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: Error) => err instanceof ConfigError && err.message.includes(name),
        `${name}=${value}`,
      );
    }
    assert.throws(
      () => loadConfig({ BARGE_SMTP_URL: 'http://user:hunter2@mail' }),
      (err: Error) => err instanceof ConfigError && /BARGE_SMTP_URL/.test(err.message) && !/hunter2/.test(err.message),
    );
  });
});
