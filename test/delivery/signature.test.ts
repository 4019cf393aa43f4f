/** Webhook signatures: the standardwebhooks package's own, a bare base64 secret, an empty one, cached keys. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { SigningKeys, signWebhook } from '../../src/delivery/webhook/signature.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';

describe('signWebhook', () => {
  test('equals the standardwebhooks package signature, and that package verifies it', () => {
    const body = '{"cargo_id":"crg_1","success":true,"response":{"text":"é 😀"},"error":null}';
    const seconds = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 20; i++) {
      const secret = generateWebhookSecret();
      const signature = signWebhook(secret, `dlv_${i}`, seconds, body);
      assert.equal(signature, new Webhook(secret).sign(`dlv_${i}`, new Date(seconds * 1000), body));
      const headers = {
        'webhook-id': `dlv_${i}`,
        'webhook-timestamp': String(seconds),
        'webhook-signature': signature,
      };
      assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    }
  });

  test('a secret without the whsec_ prefix is the bare base64 key, as in the package', () => {
    const key = Buffer.alloc(32, 9).toString('base64');
    assert.equal(
      signWebhook(key, 'dlv_x', 1_700_000_000, '{}'),
      signWebhook(`whsec_${key}`, 'dlv_x', 1_700_000_000, '{}'),
    );
  });

  test('an empty secret is refused', () => {
    assert.throws(() => signWebhook('whsec_', 'dlv_x', 1, '{}'), /cannot be empty/);
  });

  test('SigningKeys opens a stored secret once and signs as the secret itself does', () => {
    const secret = generateWebhookSecret();
    const opened: string[] = [];
    const keys = new SigningKeys((stored, projectId) => {
      opened.push(`${projectId}:${stored}`);
      return stored === 'sealed' ? null : secret;
    });
    const key = keys.get('stored', 'prj_a');
    assert.ok(key !== null);
    assert.equal(keys.get('stored', 'prj_a'), key);
    assert.equal(signWebhook(key, 'dlv_x', 1_700_000_000, '{}'), signWebhook(secret, 'dlv_x', 1_700_000_000, '{}'));
    // A secret that does not open stays unusable, and is not opened again.
    assert.equal(keys.get('sealed', 'prj_a'), null);
    assert.equal(keys.get('sealed', 'prj_a'), null);
    // The same stored text of another project is opened for that project (sealing binds the project).
    keys.get('stored', 'prj_b');
    assert.deepEqual(opened, ['prj_a:stored', 'prj_a:sealed', 'prj_b:stored']);
  });
});
