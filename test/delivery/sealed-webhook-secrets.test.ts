/**
 * Webhook signing secrets at rest: with BARGE_SECRET_KEY set, the project row holds them sealed
 * (the raw row never shows the secret), deliveries still carry signatures that verify, a rotation
 * still signs with both secrets for 24 hours, and secrets stored in plaintext before the key was
 * configured are sealed by `barge migrate` (and every start).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { createProject } from '../../src/operations/create-project.js';
import { rotateWebhookSecret } from '../../src/operations/rotate-webhook-secret.js';
import { createApiKey } from '../../src/store/admin/api-keys.js';
import type { Database } from '../../src/store/database.js';
import { createProjectWithKey, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { testWorker } from '../helpers/pipeline.js';
import { startReceiver } from '../helpers/receiver.js';
import { assertBuildIsFresh, BargeProcess } from '../helpers/serve.js';
import { assertNoSecret, attemptsOfCargo, load, verifies } from './webhook-support.js';

const KEY = randomBytes(32);
const KEY_HEX = KEY.toString('hex');

async function rawSecrets(database: Database, projectId: string): Promise<string> {
  const row = await database.write
    .selectFrom('projects')
    .select(['webhook_secret', 'previous_webhook_secret'])
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  return JSON.stringify(row);
}

function assertSealed(raw: string, ...secrets: string[]): void {
  assert.ok(!raw.includes('whsec_'), `plaintext in the row: ${raw}`);
  for (const secret of secrets) assertNoSecret(raw, secret);
}

for (const backend of await backends({ childProcesses: true })) {
  describe(`webhook signing secrets sealed at rest on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
      app = await startTestApp(db.database, { clock, config: { secretKey: KEY } });
    });
    after(async () => {
      await app.close();
      await db.drop();
    });

    test('created and rotated secrets are sealed in the row; deliveries verify with both during the grace period', async () => {
      const receiver = await startReceiver();
      try {
        const deps = { database: db.database, clock, config: { secretKey: KEY } };
        const created = await createProject(deps, { slug: `sealed-${process.pid}-${Date.now() % 100000}` });
        assert.ok(created.ok);
        const oldSecret = created.value.webhookSecret;
        assert.match(oldSecret, /^whsec_/);
        assertSealed(await rawSecrets(db.database, created.value.id), oldSecret);

        const rotated = await rotateWebhookSecret(deps, { slug: created.value.slug });
        assert.ok(rotated.ok);
        const newSecret = rotated.value.webhookSecret;
        assertSealed(await rawSecrets(db.database, created.value.id), oldSecret, newSecret);

        const { key } = await createApiKey(db.database, {
          projectId: created.value.id,
          name: 'sealed',
          expiresAt: null,
          now: clock.now(),
        });
        const { worker } = await testWorker(db.database, clock, { latencyMs: 0, config: { secretKey: KEY } });
        await load(app, key, 'sealed', { callback_url: `${receiver.url}/h` });
        clock.advance(500);
        await worker.runUntilIdle();
        await worker.close();
        assert.equal(receiver.received.length, 1);
        const [post] = receiver.received;
        assert.ok(post);
        assert.ok(verifies(post, newSecret), 'verifies with the new secret');
        assert.ok(verifies(post, oldSecret), 'verifies with the previous secret during the grace period');
      } finally {
        await receiver.close();
      }
    });

    test('plaintext secrets from before the key are sealed by `barge migrate`, and still sign', async () => {
      const receiver = await startReceiver();
      try {
        // Stored without a key, as before BARGE_SECRET_KEY was configured, and rotated once.
        const { projectId, slug, key, webhookSecret: oldSecret } = await createProjectWithKey(db.database);
        const rotated = await rotateWebhookSecret(
          { database: db.database, clock, config: { secretKey: null } },
          { slug },
        );
        assert.ok(rotated.ok);
        const newSecret = rotated.value.webhookSecret;
        assert.ok((await rawSecrets(db.database, projectId)).includes(newSecret), 'plaintext before the key');

        const migrate = new BargeProcess(['migrate', '--json'], {
          BARGE_DATABASE_URL: db.url,
          BARGE_SECRET_KEY: KEY_HEX,
          BARGE_LOG_LEVEL: 'warn',
        });
        assert.equal((await migrate.exited).code, 0, migrate.stderr);
        const report = JSON.parse(migrate.lines.join('')) as { sealed_webhook_secrets: number };
        assert.ok(report.sealed_webhook_secrets >= 1, JSON.stringify(report));
        assertSealed(await rawSecrets(db.database, projectId), oldSecret, newSecret);

        const { worker } = await testWorker(db.database, clock, { latencyMs: 0, config: { secretKey: KEY } });
        await load(app, key, 'sealed later', { callback_url: `${receiver.url}/h` });
        clock.advance(500);
        await worker.runUntilIdle();
        await worker.close();
        const [post] = receiver.received;
        assert.ok(post, 'delivered');
        assert.ok(verifies(post, newSecret) && verifies(post, oldSecret));
      } finally {
        await receiver.close();
      }
    });

    test('a sealed secret that does not open (another key) fails the attempt, retryable, and sends nothing', async () => {
      const receiver = await startReceiver();
      try {
        const deps = { database: db.database, clock, config: { secretKey: KEY } };
        const created = await createProject(deps, { slug: `wrong-key-${process.pid}-${Date.now() % 100000}` });
        assert.ok(created.ok);
        const { key } = await createApiKey(db.database, {
          projectId: created.value.id,
          name: 'k',
          expiresAt: null,
          now: clock.now(),
        });
        const { worker } = await testWorker(db.database, clock, {
          latencyMs: 0,
          config: { secretKey: randomBytes(32), logLevel: 'silent' },
        });
        const cargoId = await load(app, key, 'wrong key', { callback_url: `${receiver.url}/h` });
        clock.advance(500);
        await worker.runUntilIdle();
        await worker.close();
        assert.equal(receiver.received.length, 0);
        const attempts = await attemptsOfCargo(db.database, cargoId);
        assert.deepEqual(
          attempts.map((a) => a.error_class),
          ['signing_secret_unavailable'],
        );
      } finally {
        await receiver.close();
      }
    });
  });
}
