/**
 * Object delivery end to end on every backend: the written object and its key, denied access and incident mail,
 * deleted buckets and connections, throttling, KMS errors, retries, and static credentials.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { newExternalId } from '../../src/domain/connections.js';
import { newId } from '../../src/domain/ids.js';
import { sealSecret } from '../../src/domain/secret-box.js';
import { findConnection, insertConnection } from '../../src/store/admin/connections.js';
import { createProjectWithKey, mockBody, startTestApp, type TestApp } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { notifyTo, type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';
import { testWorker } from '../helpers/pipeline.js';
import { s3ErrorXml } from '../helpers/s3-proxy.js';
import { SERVICE_CREDENTIALS } from '../helpers/s3-server.js';

const isPut = (r: { method: string }) => r.method === 'PUT';
/** Requests to one bucket: deliveries of earlier tests may still be retrying to theirs. */
const to = (bucket: string) => (r: { url: string }) =>
  r.url.startsWith(`/${bucket}/`) || r.url.split('?')[0] === `/${bucket}`;

for (const backend of await backends()) {
  describe(`object delivery on ${backend.name}`, () => {
    let db: TestDatabase;
    let app: TestApp;
    let rig: ObjectStoreRig;
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    before(async () => {
      db = await backend.create();
      rig = await startObjectStoreRig();
      app = await startTestApp(db.database, { clock, config: rig.config });
    });
    after(async () => {
      await app.close();
      await rig.close();
      await db.drop();
    });

    /** A project with a key, a role connection and a bucket; a worker over the rig's config. */
    const setup = async (options: { allow?: boolean } = {}) => {
      const project = await createProjectWithKey(db.database);
      const bucket = await rig.bucket();
      const connection = await rig.roleConnection(db.database, project.projectId, {
        ...(options.allow ? { allow: [`arn:aws:s3:::${bucket}`] } : {}),
      });
      const { worker } = await testWorker(db.database, clock, { latencyMs: 0, config: rig.config });
      rig.proxy.reset();
      return { ...project, bucket, connection, worker };
    };
    const load = async (key: string, body: unknown) => {
      const res = await app.request('POST', '/cargo/load', { key, body });
      assert.equal(res.status, 200, res.text);
      return res.body.cargo_id as string;
    };
    const target = (connectionId: string, bucket: string, extra: Record<string, unknown> = {}) => ({
      callback: { type: 'object_store', connection_id: connectionId, bucket_arn: `arn:aws:s3:::${bucket}`, ...extra },
    });
    const tracking = async (key: string, id: string) =>
      (await app.request('GET', `/cargo/${id}/tracking`, { key })).body;
    const attemptRows = (cargoId: string) =>
      db.database.write
        .selectFrom('delivery_attempts as a')
        .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
        .selectAll('a')
        .where('d.cargo_id', '=', cargoId)
        .where('d.channel', '=', 'object_store')
        .orderBy('a.attempt')
        .execute();

    test('a completed cargo is written as {prefix}{cargo_id}.json with the exact body, content type and metadata, through an assumed role', async () => {
      const { key, bucket, connection, worker } = await setup();
      // S3 tells the bucket's region in HeadBucket's answer; the write is then signed for it.
      rig.proxy.script((r) =>
        r.method === 'HEAD' && to(bucket)(r)
          ? { kind: 'forward', addHeaders: { 'x-amz-bucket-region': 'eu-west-3' } }
          : { kind: 'forward' },
      );
      const stsBefore = rig.sts.calls.length;
      const id = await load(
        key,
        mockBody('write me to a bucket', { ...target(connection.id, bucket), metadata: { order: 'B-7', n: 1 } }),
      );
      clock.advance(500);
      await worker.runUntilIdle();

      assert.deepEqual(await rig.s3.keys(bucket), [`convoy/${id}.json`]);
      const object = await rig.s3.getObject(bucket, `convoy/${id}.json`);
      assert.equal(object.contentType, 'application/json');
      assert.deepEqual(object.metadata, { 'svc-cargo-id': id, 'svc-success': 'true' });
      const mailbox = await app.request('GET', `/cargo/${id}/result`, { key });
      const expected =
        `{"cargo_id":"${id}","success":true,"response":${JSON.stringify(mailbox.body.response)}` +
        `,"response_truncated":false,"result_url":"https://barge.test/cargo/${id}/result","metadata":{"order":"B-7","n":1}}`;
      assert.equal(object.body.toString('utf8'), expected);

      // The role was assumed with the service's own identity, the external id, and a session
      // policy allowing PutObject under this bucket's prefix only.
      const calls = rig.sts.calls.slice(stsBefore);
      assert.equal(calls.length, 1);
      const [call] = calls;
      assert.ok(call);
      assert.equal(call.answer, 'credentials');
      assert.equal(call.roleArn, connection.roleArn);
      assert.equal(call.externalId, connection.externalId);
      assert.equal(call.callerKeyId, SERVICE_CREDENTIALS.accessKeyId);
      assert.equal(call.sessionName, `barge-${connection.id}`);
      const policy = JSON.parse(call.policy ?? '{}');
      assert.deepEqual(policy.Statement[0], {
        Sid: 'PutResultObjects',
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: `arn:aws:s3:::${bucket}/convoy/*`,
      });
      // The write itself was signed with the session credentials, for the reported region.
      const put = rig.proxy.requests.filter(to(bucket)).find(isPut);
      assert.ok(put);
      assert.equal(put.url.split('?')[0], `/${bucket}/convoy/${id}.json`);
      assert.match(
        put.headers.authorization ?? '',
        new RegExp(`Credential=${call.credentials?.accessKeyId}/\\d{8}/eu-west-3/s3/`),
      );
      assert.equal(put.headers['x-amz-security-token'], call.credentials?.sessionToken);

      const track = await tracking(key, id);
      assert.equal(track.status, 'callback_delivered');
      assert.deepEqual(track.deliveries, [
        {
          channel: 'object_store',
          status: 'delivered',
          attempts: 1,
          last_error: null,
          last_status_code: 200,
          next_attempt_at: null,
        },
      ]);
      // No secret reaches the attempt log.
      const rows = JSON.stringify(await attemptRows(id));
      for (const secret of [
        call.credentials?.secretAccessKey,
        call.credentials?.sessionToken,
        SERVICE_CREDENTIALS.secretAccessKey,
      ]) {
        assert.ok(secret && !rows.includes(secret));
      }

      // A second cargo to the same target reuses the cached session and region.
      const heads = rig.proxy.requests.filter(to(bucket)).filter((r) => r.method === 'HEAD').length;
      const second = await load(key, mockBody('and me', target(connection.id, bucket)));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.deepEqual(await rig.s3.keys(bucket), [`convoy/${id}.json`, `convoy/${second}.json`].sort());
      assert.equal(rig.sts.calls.length, stsBefore + 1, 'no second AssumeRole');
      assert.equal(heads, 1);
      assert.equal(
        rig.proxy.requests.filter(to(bucket)).filter((r) => r.method === 'HEAD').length,
        1,
        'no second HeadBucket',
      );
    });

    test('a failed cargo writes the same key shape with success false, error_message and svc-success false', async () => {
      const { key, bucket, connection, worker } = await setup();
      const id = await load(
        key,
        mockBody('please svc-mock:fail', target(connection.id, bucket, { key_prefix: 'results/2026/' })),
      );
      clock.advance(500);
      await worker.runUntilIdle();

      const object = await rig.s3.getObject(bucket, `results/2026/${id}.json`);
      assert.deepEqual(object.metadata, { 'svc-cargo-id': id, 'svc-success': 'false' });
      const mailbox = await app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(mailbox.body.success, false);
      assert.equal(
        object.body.toString('utf8'),
        `{"cargo_id":"${id}","success":false,"response":null,"error_message":${JSON.stringify(mailbox.body.error_message)}` +
          `,"response_truncated":false,"result_url":"https://barge.test/cargo/${id}/result","metadata":null}`,
      );
      assert.equal((await tracking(key, id)).status, 'callback_delivered');
    });

    test('an empty key prefix writes at the bucket root', async () => {
      const { key, bucket, connection, worker } = await setup();
      const id = await load(key, mockBody('root', target(connection.id, bucket, { key_prefix: '' })));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.deepEqual(await rig.s3.keys(bucket), [`${id}.json`]);
      assert.match(
        JSON.parse(rig.sts.calls.at(-1)?.policy ?? '{}').Statement[0].Resource,
        new RegExp(`^arn:aws:s3:::${bucket}/\\*$`),
      );
    });

    test('a response larger than 1 MB is written whole, never truncated', async () => {
      const { key, bucket, connection, worker } = await setup();
      const prompt = 'cargo '.repeat(220_000);
      const id = await load(key, {
        params: { model: 'svc-mock', max_tokens: 500_000, messages: [{ role: 'user', content: prompt }] },
        ...target(connection.id, bucket),
      });
      clock.advance(500);
      await worker.runUntilIdle();
      const object = await rig.s3.getObject(bucket, `convoy/${id}.json`);
      assert.ok(object.body.length > 1_000_000, `object is ${object.body.length} bytes`);
      const body = JSON.parse(object.body.toString('utf8'));
      assert.equal(body.response_truncated, false);
      const mailbox = await app.request('GET', `/cargo/${id}/result`, { key });
      assert.deepEqual(body.response, mailbox.body.response);
      assert.equal(body.response.stop_reason, 'end_turn');
    });

    test('AssumeRole denied: assume_role_denied, the connection is marked failed, one mail per incident', async () => {
      const { key, slug, bucket, connection, worker } = await setup();
      await notifyTo(db.database, slug, 'ops@customer.test');
      const mailsBefore = rig.smtp.messages.length;
      rig.sts.deny(connection.roleArn as string);
      const id = await load(key, mockBody('denied', target(connection.id, bucket)));
      clock.advance(500);
      await worker.runUntilIdle();

      const track = await tracking(key, id);
      assert.equal(track.status, 'callback_pending');
      assert.match(
        track.deliveries[0].last_error,
        /^assume_role_denied: AssumeRole of arn:aws:iam::444455556666:role\/\S+ was denied: AccessDenied \(HTTP 403\)/,
      );
      assert.equal(track.deliveries[0].last_status_code, 403);
      const [attempt] = await attemptRows(id);
      assert.equal(attempt?.error_class, 'assume_role_denied');
      const failed = await findConnection(db.database, connection.id);
      assert.equal(failed?.status, 'failed');
      assert.match(failed?.lastFailureReason ?? '', /^assume_role_denied: /);
      assert.equal(failed?.lastFailedAt, clock.now());

      const mails = rig.smtp.messages.slice(mailsBefore);
      assert.equal(mails.length, 1);
      const [mail] = mails;
      assert.deepEqual(mail?.to, ['ops@customer.test']);
      assert.equal(mail?.from, 'barge@barge.test');
      assert.match(mail?.headers.subject ?? '', new RegExp(`connection ${connection.id} failed`));
      assert.match(mail?.text ?? '', new RegExp(`project '${slug}'`));
      assert.match(mail?.text ?? '', new RegExp(connection.externalId));
      assert.match(mail?.text ?? '', new RegExp(`Cargo: ${id}`));

      // The retry 30 s later fails the same way: still one mail for this incident.
      clock.advance(30_000);
      await worker.runUntilIdle();
      assert.equal((await tracking(key, id)).deliveries[0].attempts, 2);
      assert.equal(rig.smtp.messages.length, mailsBefore + 1);
      assert.equal(
        rig.sts.calls.filter((c) => c.roleArn === connection.roleArn).length,
        2,
        'a denied role is asked again',
      );

      // Fixed on the customer's side: the next retry delivers and the connection is active again.
      rig.sts.deny(connection.roleArn as string, false);
      clock.advance(120_000);
      await worker.runUntilIdle();
      assert.equal((await tracking(key, id)).status, 'callback_delivered');
      assert.deepEqual(await rig.s3.keys(bucket), [`convoy/${id}.json`]);
      assert.equal((await findConnection(db.database, connection.id))?.status, 'active');

      // Broken again later: a new incident, a new mail.
      rig.sts.deny(connection.roleArn as string);
      const again = await load(key, mockBody('denied again', target(connection.id, bucket, { key_prefix: 'other/' })));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.match((await tracking(key, again)).deliveries[0].last_error, /^assume_role_denied/);
      assert.equal(rig.smtp.messages.length, mailsBefore + 2);
      rig.sts.deny(connection.roleArn as string, false);
    });

    test('PutObject denied (a bucket policy deny) is assume_role_denied too, and marks the connection failed', async () => {
      const { key, bucket, connection, worker } = await setup();
      rig.proxy.script((r) =>
        isPut(r) && to(bucket)(r)
          ? { kind: 'answer', answer: { status: 403, body: s3ErrorXml('AccessDenied', 'Access Denied') } }
          : { kind: 'forward' },
      );
      const id = await load(key, mockBody('bucket policy says no', target(connection.id, bucket)));
      clock.advance(500);
      await worker.runUntilIdle();
      const [attempt] = await attemptRows(id);
      assert.equal(attempt?.error_class, 'assume_role_denied');
      assert.match(
        attempt?.error_detail ?? '',
        new RegExp(`PutObject on '${bucket}/convoy/${id}.json' was denied: AccessDenied \\(HTTP 403\\)`),
      );
      assert.equal(attempt?.status_code, 403);
      assert.equal((await findConnection(db.database, connection.id))?.status, 'failed');
      // The project has no notification address: the incident is recorded, no mail is sent.
      assert.ok(!rig.smtp.messages.some((m) => m.text.includes(connection.id)));
    });

    test('a bucket deleted after submit: target_not_found on every retry, then callback_failed; the result stays in the mailbox', async () => {
      const { key, bucket, connection, worker } = await setup();
      const id = await load(key, mockBody('nowhere to go', target(connection.id, bucket)));
      await rig.s3.deleteBucket(bucket);
      clock.advance(500);
      await worker.runUntilIdle();
      let track = await tracking(key, id);
      assert.match(track.deliveries[0].last_error, new RegExp(`^target_not_found: bucket '${bucket}' does not exist`));
      assert.equal(track.deliveries[0].last_status_code, 404);
      for (const delay of [30_000, 120_000, 600_000, 1_800_000, 3_600_000]) {
        clock.advance(delay);
        await worker.runUntilIdle();
      }
      track = await tracking(key, id);
      assert.equal(track.status, 'callback_failed');
      assert.equal(track.deliveries[0].status, 'failed');
      assert.equal(track.deliveries[0].attempts, 6);
      const rows = await attemptRows(id);
      assert.deepEqual(
        rows.map((r) => r.error_class),
        Array(6).fill('target_not_found'),
      );
      const mailbox = await app.request('GET', `/cargo/${id}/result`, { key });
      assert.equal(mailbox.status, 200);
      assert.equal(mailbox.body.success, true);
      assert.equal(
        (await findConnection(db.database, connection.id))?.status,
        'active',
        'a missing bucket is no access incident',
      );
    });

    test('SlowDown twice is absorbed by the service backoff: delivered on the first customer-visible attempt', async () => {
      const { key, bucket, connection, worker } = await setup();
      let slowDowns = 0;
      rig.proxy.script((r) => {
        if (isPut(r) && to(bucket)(r) && slowDowns < 2) {
          slowDowns++;
          return {
            kind: 'answer',
            answer: { status: 503, body: s3ErrorXml('SlowDown', 'Please reduce your request rate.') },
          };
        }
        return { kind: 'forward' };
      });
      const id = await load(key, mockBody('slow down', target(connection.id, bucket)));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal(rig.proxy.requests.filter(to(bucket)).filter(isPut).length, 3);
      const track = await tracking(key, id);
      assert.equal(track.status, 'callback_delivered');
      assert.equal(track.deliveries[0].attempts, 1);
      assert.deepEqual(await rig.s3.keys(bucket), [`convoy/${id}.json`]);
    });

    test('a KMS error is target_misconfigured with the KMS.* detail; the connection stays active', async () => {
      const { key, bucket, connection, worker } = await setup();
      rig.proxy.script((r) =>
        isPut(r) && to(bucket)(r)
          ? {
              kind: 'answer',
              answer: {
                status: 400,
                body: s3ErrorXml(
                  'KMS.DisabledException',
                  'arn:aws:kms:eu-west-3:444455556666:key/1234abcd is disabled.',
                ),
              },
            }
          : { kind: 'forward' },
      );
      const id = await load(key, mockBody('encrypted bucket', target(connection.id, bucket)));
      clock.advance(500);
      await worker.runUntilIdle();
      const track = await tracking(key, id);
      assert.match(
        track.deliveries[0].last_error,
        /^target_misconfigured: the bucket's encryption key cannot be used: KMS\.DisabledException \(HTTP 400\): arn:aws:kms:/,
      );
      const [attempt] = await attemptRows(id);
      assert.equal(attempt?.error_class, 'target_misconfigured');
      assert.equal((await findConnection(db.database, connection.id))?.status, 'active');
    });

    test('a retry overwrites the same key with identical bytes', async () => {
      const { key, bucket, connection, worker } = await setup();
      // The first write lands, but its answer is lost: the attempt fails and is retried.
      let first = true;
      rig.proxy.script((r) => {
        if (isPut(r) && to(bucket)(r) && first) {
          first = false;
          return {
            kind: 'forward_then_answer',
            answer: { status: 500, body: s3ErrorXml('InternalError', 'We encountered an internal error.') },
          };
        }
        return { kind: 'forward' };
      });
      const id = await load(key, mockBody('twice', target(connection.id, bucket, { key_prefix: 'a/b/' })));
      clock.advance(500);
      await worker.runUntilIdle();
      const [failed] = await attemptRows(id);
      assert.equal(failed?.error_class, 'storage_error');
      const afterFirst = await rig.s3.getObject(bucket, `a/b/${id}.json`);

      clock.advance(30_000);
      await worker.runUntilIdle();
      assert.equal((await tracking(key, id)).status, 'callback_delivered');
      const puts = rig.proxy.requests.filter(to(bucket)).filter(isPut);
      assert.equal(puts.length, 2);
      assert.equal(puts[0]?.url, puts[1]?.url);
      assert.ok(puts[0]?.body.equals(puts[1]?.body as Buffer), 'both attempts sent the same bytes');
      const final = await rig.s3.getObject(bucket, `a/b/${id}.json`);
      assert.ok(final.body.equals(afterFirst.body));
      assert.ok(final.body.equals(puts[0]?.body as Buffer));
      assert.deepEqual(await rig.s3.keys(bucket), [`a/b/${id}.json`]);
    });

    test('webhook and object delivery on one cargo: callback_delivered only once both succeeded', async () => {
      const { startReceiver } = await import('../helpers/receiver.js');
      const receiver = await startReceiver();
      try {
        const { key, bucket, connection, worker } = await setup();
        let failPut = true;
        rig.proxy.script((r) =>
          isPut(r) && to(bucket)(r) && failPut
            ? {
                kind: 'answer',
                answer: { status: 500, body: s3ErrorXml('InternalError', 'We encountered an internal error.') },
              }
            : { kind: 'forward' },
        );
        const id = await load(
          key,
          mockBody('both ways', { callback_url: `${receiver.url}/hook`, ...target(connection.id, bucket) }),
        );
        clock.advance(500);
        await worker.runUntilIdle();
        let track = await tracking(key, id);
        assert.equal(receiver.received.length, 1);
        assert.equal(track.status, 'callback_pending', 'the webhook alone is not enough');
        const byChannel = Object.fromEntries(track.deliveries.map((d: { channel: string }) => [d.channel, d]));
        assert.equal(byChannel.webhook.status, 'delivered');
        assert.equal(byChannel.object_store.status, 'pending');
        assert.match(byChannel.object_store.last_error, /^storage_error: InternalError \(HTTP 500\)/);

        failPut = false;
        clock.advance(30_000);
        await worker.runUntilIdle();
        track = await tracking(key, id);
        assert.equal(track.status, 'callback_delivered');
        assert.deepEqual(await rig.s3.keys(bucket), [`convoy/${id}.json`]);

        // And when the object delivery fails for good, the cargo is callback_failed although the
        // webhook was delivered.
        const gone = await rig.bucket();
        const lost = await load(
          key,
          mockBody('half way', { callback_url: `${receiver.url}/hook`, ...target(connection.id, gone) }),
        );
        await rig.s3.deleteBucket(gone);
        clock.advance(500);
        for (const delay of [0, 30_000, 120_000, 600_000, 1_800_000, 3_600_000]) {
          clock.advance(delay);
          await worker.runUntilIdle();
        }
        track = await tracking(key, lost);
        assert.equal(track.status, 'callback_failed');
        assert.deepEqual(
          track.deliveries.map((d: { channel: string; status: string }) => [d.channel, d.status]).sort(),
          [
            ['object_store', 'failed'],
            ['webhook', 'delivered'],
          ],
        );
      } finally {
        await receiver.close();
      }
    });

    test('a static-credentials connection to an S3-compatible endpoint delivers without assuming a role', async () => {
      const { key, projectId, bucket, worker } = await setup();
      const id = newId('conn');
      await insertConnection(db.database, {
        id,
        projectId,
        roleArn: null,
        externalId: newExternalId(),
        allowedTargets: null,
        endpointUrl: rig.s3.url,
        region: 'garage',
        sealedCredentials: sealSecret(rig.config.secretKey as Buffer, JSON.stringify(SERVICE_CREDENTIALS), id),
        now: Date.now(),
      });
      const stsCalls = rig.sts.calls.length;
      const cargoId = await load(key, mockBody('to minio', target(id, bucket)));
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal((await tracking(key, cargoId)).status, 'callback_delivered');
      const object = await rig.s3.getObject(bucket, `convoy/${cargoId}.json`);
      assert.equal(JSON.parse(object.body.toString('utf8')).cargo_id, cargoId);
      assert.equal(rig.sts.calls.length, stsCalls, 'no AssumeRole');
      assert.equal(rig.proxy.requests.filter(to(bucket)).length, 0, "the connection's own endpoint, not the service's");
    });

    test('a connection deleted after submit: connection_not_found', async () => {
      const { key, bucket, connection, worker } = await setup();
      const id = await load(key, mockBody('orphan', target(connection.id, bucket)));
      await db.database.write.deleteFrom('connections').where('id', '=', connection.id).execute();
      clock.advance(500);
      await worker.runUntilIdle();
      assert.match(
        (await tracking(key, id)).deliveries[0].last_error,
        new RegExp(`^connection_not_found: connection ${connection.id} no longer exists`),
      );
    });
  });
}
