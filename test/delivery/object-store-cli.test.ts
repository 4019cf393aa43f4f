/**
 * The built CLI's `barge connection` commands on SQLite and PostgreSQL: create, list, show and delete, static
 * credentials, the capability check and its failures, and the project's incident address.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { applyConnectionEffect, findConnection } from '../../src/store/admin/connections.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';
import { s3ErrorXml } from '../helpers/s3-proxy.js';
import { SERVICE_CREDENTIALS } from '../helpers/s3-server.js';

/** The built command, as installed (`npm test` builds it first). */
const MAIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
const SECRET_KEY = randomBytes(32).toString('hex');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

before(() => {
  assert.ok(existsSync(MAIN), `${MAIN} is missing: run npm run build (npm test does it in pretest)`);
});

for (const backend of await backends({ childProcesses: true })) {
  describe(`barge connection commands on ${backend.name}`, () => {
    let db: TestDatabase;
    let rig: ObjectStoreRig;
    before(async () => {
      db = await backend.create();
      rig = await startObjectStoreRig();
    });
    after(async () => {
      await rig.close();
      await db.drop();
    });

    /** Runs `barge ...` against the test database and the rig, nothing BARGE_* or AWS_* inherited. */
    const barge = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<Run> => {
      const env: NodeJS.ProcessEnv = {};
      for (const [name, value] of Object.entries(process.env)) {
        if (!/^(BARGE_|AWS_)/.test(name) && name !== 'HOST' && name !== 'PORT') env[name] = value;
      }
      Object.assign(env, {
        BARGE_DATABASE_URL: db.url,
        BARGE_AWS_S3_ENDPOINT: rig.proxy.url,
        BARGE_AWS_STS_ENDPOINT: rig.sts.url,
        BARGE_AWS_S3_FORCE_PATH_STYLE: 'true',
        BARGE_OBJECT_THROTTLE_BASE_MS: '5',
        BARGE_SECRET_KEY: SECRET_KEY,
        // The service's own identity, through the standard AWS credential chain.
        AWS_ACCESS_KEY_ID: SERVICE_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: SERVICE_CREDENTIALS.secretAccessKey,
        ...options.env,
      });
      return new Promise((resolve) => {
        const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
        });
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        const timer = setTimeout(() => child.kill(), 30_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
        child.stdin.end(options.stdin ?? '');
      });
    };
    const json = (run: Run): any => {
      const lines = run.stdout.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, `one JSON line, got: ${run.stdout}\nstderr: ${run.stderr}`);
      return JSON.parse(lines[0] as string);
    };
    const ok = (run: Run): Run => {
      assert.equal(run.code, 0, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
      return run;
    };
    const failed = (run: Run, message: RegExp) => {
      assert.notEqual(run.code, 0, run.stdout);
      assert.match(run.stderr, message);
      assert.match(json(run).error, message);
    };
    /** Runs `barge connection check` of a connection against the bucket of this name, with these flags. */
    const checkConnection = (
      connectionId: string,
      bucket: string,
      flags: string[] = [],
      options?: { env?: Record<string, string> },
    ) => barge(['connection', 'check', connectionId, '--bucket', `arn:aws:s3:::${bucket}`, ...flags], options);
    /** Sets when the connection was last checked, which is what the once-a-minute limit looks at. */
    const setLastCheckAt = (connectionId: string, at: number | null) =>
      db.database.write.updateTable('connections').set({ last_check_at: at }).where('id', '=', connectionId).execute();

    test('create, list, show and delete a role connection, each with --json', async () => {
      const { slug } = await createProjectWithKey(db.database);
      const created = json(
        ok(
          await barge([
            'connection',
            'create',
            slug,
            '--role-arn',
            'arn:aws:iam::444455556666:role/barge-delivery',
            '--allow',
            'arn:aws:s3:::bucket-one',
            '--allow',
            'arn:aws:s3:::bucket-two',
            '--json',
          ]),
        ),
      );
      assert.match(created.id, /^conn_[0-9a-z]{26}$/);
      assert.match(created.external_id, /^barge-[A-Za-z0-9]{32}$/);
      assert.deepEqual(
        { ...created, id: 'x', external_id: 'x', created_at: 'x', updated_at: 'x' },
        {
          id: 'x',
          project: slug,
          kind: 'assume_role',
          role_arn: 'arn:aws:iam::444455556666:role/barge-delivery',
          external_id: 'x',
          endpoint_url: null,
          region: null,
          allowed_targets: ['arn:aws:s3:::bucket-one', 'arn:aws:s3:::bucket-two'],
          status: 'active',
          last_failure_reason: null,
          last_failed_at: null,
          last_check_at: null,
          next_check_at: null,
          created_at: 'x',
          updated_at: 'x',
        },
      );
      const text = ok(
        await barge(['connection', 'create', slug, '--role-arn', 'arn:aws:iam::444455556666:role/other']),
      );
      assert.match(text.stdout, /external id: {3}barge-[A-Za-z0-9]{32}/);
      assert.match(text.stdout, /"sts:ExternalId"/);

      const listed = json(ok(await barge(['connection', 'list', slug, '--json'])));
      assert.equal(listed.connections.length, 2);
      assert.deepEqual(listed.connections[0], created);
      assert.deepEqual(json(ok(await barge(['connection', 'show', created.id, '--json']))), created);
      assert.match(ok(await barge(['connection', 'list', slug])).stdout, /^ID\s+ACCESS\s+STATUS/);

      assert.deepEqual(json(ok(await barge(['connection', 'delete', created.id, '--json']))), {
        id: created.id,
        deleted: true,
      });
      failed(await barge(['connection', 'show', created.id, '--json']), /no connection/);
      failed(await barge(['connection', 'delete', created.id, '--json']), /no connection/);
    });

    test('create refuses bad input with a message', async () => {
      const { slug } = await createProjectWithKey(db.database);
      failed(await barge(['connection', 'create', slug, '--json']), /either --role-arn, or static credentials/);
      failed(
        await barge(['connection', 'create', slug, '--role-arn', 'arn:aws:iam::1:role/x', '--json']),
        /invalid --role-arn/,
      );
      failed(
        await barge([
          'connection',
          'create',
          slug,
          '--role-arn',
          'arn:aws:iam::444455556666:role/x',
          '--allow',
          'arn:aws:s3:::b/key',
          '--json',
        ]),
        /invalid --allow 'arn:aws:s3:::b\/key': must name a bucket only/,
      );
      failed(
        await barge([
          'connection',
          'create',
          'no-such-project',
          '--role-arn',
          'arn:aws:iam::444455556666:role/x',
          '--json',
        ]),
        /no project 'no-such-project'/,
      );
    });

    test('static credentials for an S3-compatible store: stored encrypted, never printed, and they deliver', async () => {
      const { slug } = await createProjectWithKey(db.database);
      const secret = SERVICE_CREDENTIALS.secretAccessKey;
      const withoutKey = await barge(
        [
          'connection',
          'create',
          slug,
          '--endpoint',
          rig.s3.url,
          '--access-key-id',
          'S3RVER',
          '--secret-access-key-stdin',
          '--json',
        ],
        { stdin: `${secret}\n`, env: { BARGE_SECRET_KEY: '' } },
      );
      failed(withoutKey, /BARGE_SECRET_KEY must be set/);

      const run = ok(
        await barge(
          [
            'connection',
            'create',
            slug,
            '--endpoint',
            rig.s3.url,
            '--region',
            'garage',
            '--access-key-id',
            SERVICE_CREDENTIALS.accessKeyId,
            '--secret-access-key-stdin',
            '--json',
          ],
          { stdin: `${secret}\n` },
        ),
      );
      const created = json(run);
      assert.equal(created.kind, 'static_credentials');
      assert.equal(created.role_arn, null);
      assert.equal(created.endpoint_url, rig.s3.url);
      assert.equal(created.region, 'garage');
      const shown = ok(await barge(['connection', 'show', created.id]));
      for (const output of [
        run.stdout,
        run.stderr,
        shown.stdout,
        JSON.stringify(json(ok(await barge(['connection', 'show', created.id, '--json'])))),
      ]) {
        assert.ok(!output.includes(secret), 'the secret is never printed');
        assert.ok(!output.includes(SERVICE_CREDENTIALS.accessKeyId), 'nor the access key id');
      }
      const row = await db.database.write
        .selectFrom('connections')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.sealed_credentials?.startsWith('v1:'));
      assert.ok(!row.sealed_credentials?.includes(secret));

      // The capability check signs with them, straight to the store: no role is assumed.
      const stsCalls = rig.sts.calls.length;
      const bucket = await rig.bucket();
      const check = json(ok(await checkConnection(created.id, bucket, ['--json'])));
      assert.equal(check.ok, true);
      assert.equal(check.capabilities.assume_role.status, 'skipped');
      assert.equal(check.capabilities.put_object.status, 'ok');
      assert.equal(rig.sts.calls.length, stsCalls);
      assert.deepEqual(await rig.s3.keys(bucket), ['convoy/svc-verify.json']);
      // With another key the sealed credentials do not open.
      const other = await checkConnection(created.id, bucket, ['--role-only', '--json'], {
        env: { BARGE_SECRET_KEY: randomBytes(32).toString('hex') },
      });
      assert.equal(other.code, 1);
      assert.match(json(other).capabilities.assume_role.detail, /^connection_unusable: /);
    });

    test('the capability check writes svc-verify.json, reports each capability, and runs once a minute per connection', async () => {
      const { projectId } = await createProjectWithKey(db.database);
      const bucket = await rig.bucket();
      const connection = await rig.roleConnection(db.database, projectId);
      // An incident is open: a passing check ends it.
      await applyConnectionEffect(
        db.database,
        { connectionId: connection.id, to: 'failed', reason: 'assume_role_denied: earlier', mail: null },
        Date.now(),
      );
      const stsCalls = rig.sts.calls.length;

      const run = ok(await checkConnection(connection.id, bucket, ['--prefix', 'in/', '--json']));
      const report = json(run);
      assert.deepEqual(report, {
        connection_id: connection.id,
        bucket_arn: `arn:aws:s3:::${bucket}`,
        key: 'in/svc-verify.json',
        ok: true,
        capabilities: {
          assume_role: { status: 'ok', detail: `assumed ${connection.roleArn} with the external id` },
          put_object: { status: 'ok', detail: `wrote in/svc-verify.json in ${bucket} (region us-east-1)` },
          encryption_key: { status: 'not_used', detail: 'the store reported no KMS encryption' },
        },
      });
      const object = await rig.s3.getObject(bucket, 'in/svc-verify.json');
      assert.equal(object.body.toString('utf8'), '{"convoy_verification":true}');
      assert.equal(object.contentType, 'application/json');
      const call = rig.sts.calls[stsCalls];
      assert.equal(call?.externalId, connection.externalId);
      assert.equal(JSON.parse(call?.policy ?? '{}').Statement[0].Resource, `arn:aws:s3:::${bucket}/in/*`);
      const after = await findConnection(db.database, connection.id);
      assert.equal(after?.status, 'active');
      assert.ok(after?.lastCheckAt);
      for (const output of [run.stdout, run.stderr]) {
        assert.ok(!output.includes(call?.credentials?.sessionToken as string));
        assert.ok(!output.includes(call?.credentials?.secretAccessKey as string));
      }

      // A second check within the minute is refused with the time to wait; nothing is written.
      const puts = rig.proxy.requests.filter((r) => r.method === 'PUT').length;
      const again = await checkConnection(connection.id, bucket, ['--json']);
      failed(again, /ran less than 60 s ago \(checks write a real object\): wait (\d+) s/);
      const wait = Number(/wait (\d+) s/.exec(again.stderr)?.[1]);
      assert.ok(wait > 0 && wait <= 60, `wait ${wait}`);
      assert.equal(rig.proxy.requests.filter((r) => r.method === 'PUT').length, puts);
      // The role-only probe writes nothing and is not limited.
      const roleOnly = json(ok(await checkConnection(connection.id, bucket, ['--role-only', '--json'])));
      assert.equal(roleOnly.key, null);
      assert.equal(roleOnly.capabilities.assume_role.status, 'ok');
      assert.equal(roleOnly.capabilities.put_object.status, 'skipped');
      // Once the minute has passed, checks run again and overwrite the object.
      await setLastCheckAt(connection.id, Date.now() - 61_000);
      ok(await checkConnection(connection.id, bucket, ['--prefix', 'in/', '--json']));
      assert.deepEqual(await rig.s3.keys(bucket), ['in/svc-verify.json']);

      // Text output names each capability.
      await setLastCheckAt(connection.id, null);
      const text = ok(await checkConnection(connection.id, bucket));
      assert.match(text.stdout, /passed/);
      assert.match(text.stdout, /assume role\s+ok/);
      assert.match(text.stdout, /put object\s+ok/);
      assert.match(text.stdout, /encryption key\s+not_used/);
    });

    test('a failing check reports which capability failed and exits non-zero', async () => {
      const { projectId } = await createProjectWithKey(db.database);
      const bucket = await rig.bucket();

      const denied = await rig.roleConnection(db.database, projectId);
      rig.sts.deny(denied.roleArn as string);
      const deniedRun = await checkConnection(denied.id, bucket, ['--json']);
      rig.sts.deny(denied.roleArn as string, false);
      assert.equal(deniedRun.code, 1);
      const deniedReport = json(deniedRun);
      assert.equal(deniedReport.ok, false);
      assert.equal(deniedReport.capabilities.assume_role.status, 'failed');
      assert.match(
        deniedReport.capabilities.assume_role.detail,
        /^assume_role_denied: AssumeRole of .* was denied: AccessDenied/,
      );
      assert.equal(deniedReport.capabilities.put_object.status, 'skipped');
      assert.equal(deniedReport.capabilities.encryption_key.status, 'skipped');

      const kms = await rig.roleConnection(db.database, projectId);
      rig.proxy.script((r) =>
        r.method === 'PUT' && r.url.startsWith(`/${bucket}/`)
          ? {
              kind: 'answer',
              answer: { status: 400, body: s3ErrorXml('KMS.NotFoundException', 'Invalid keyId alias/customer-key') },
            }
          : { kind: 'forward' },
      );
      const kmsRun = await checkConnection(kms.id, bucket, ['--json']);
      rig.proxy.reset();
      assert.equal(kmsRun.code, 1);
      const kmsReport = json(kmsRun);
      assert.equal(kmsReport.capabilities.assume_role.status, 'ok');
      assert.equal(kmsReport.capabilities.put_object.status, 'failed');
      assert.equal(kmsReport.capabilities.encryption_key.status, 'failed');
      assert.match(kmsReport.capabilities.encryption_key.detail, /^target_misconfigured: .*KMS\.NotFoundException/);

      const allowed = await rig.roleConnection(db.database, projectId, { allow: ['arn:aws:s3:::only-this'] });
      failed(await checkConnection(allowed.id, bucket, ['--json']), /is not on the allow-list/);
      failed(
        await checkConnection(allowed.id, 'only-this', ['--prefix', 'x', '--json']),
        /invalid --prefix 'x': must end with '\/'/,
      );
    });

    test('project set-notification-email sets and clears the incident address', async () => {
      const { slug } = await createProjectWithKey(db.database);
      assert.deepEqual(
        json(ok(await barge(['project', 'set-notification-email', slug, 'ops@customer.test', '--json']))),
        {
          slug,
          notification_email: 'ops@customer.test',
        },
      );
      const row = await db.database.write
        .selectFrom('projects')
        .select('notification_email')
        .where('slug', '=', slug)
        .executeTakeFirst();
      assert.equal(row?.notification_email, 'ops@customer.test');
      failed(
        await barge(['project', 'set-notification-email', slug, 'not-an-address', '--json']),
        /invalid e-mail address/,
      );
      failed(await barge(['project', 'set-notification-email', slug, '--json']), /give an e-mail address, or --clear/);
      assert.deepEqual(json(ok(await barge(['project', 'set-notification-email', slug, '--clear', '--json']))), {
        slug,
        notification_email: null,
      });
      failed(await barge(['project', 'set-notification-email', 'nobody-here', 'a@b.test', '--json']), /no project/);
    });
  });
}
