/**
 * The admin API's connection routes on every backend: created over HTTP with the policies to hand
 * the customer, listed, shown, deleted, and checked against the test S3 and STS servers (each
 * capability, the once-a-minute rule as 429 check_too_soon with Retry-After and next_check_at);
 * their authorization (401s; another project's: the 404 of an unknown slug).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { adminClient, assertOtherProjectHidden, assertTokenRequired } from '../helpers/admin.js';
import { createProjectWithKey } from '../helpers/app.js';
import { assertDetail, assertInvalidField } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';

const PRINCIPAL = 'arn:aws:iam::111122223333:role/barge';
const ROLE = 'arn:aws:iam::444455556666:role/barge-delivery';

for (const backend of await backends()) {
  describe(`the admin API's connections on ${backend.name}`, () => {
    let rig: ObjectStoreRig;
    const options: { config?: Partial<Config> } = {};
    before(async () => {
      rig = await startObjectStoreRig();
      const objectStore = { ...(rig.config.objectStore as Config['objectStore']), principalArn: PRINCIPAL };
      options.config = { ...rig.config, objectStore };
    });
    after(() => rig.close());
    const h = harness(backend, options);
    const admin = adminClient(h);

    const routes = (slug: string, id = 'conn_x'): [string, string, unknown?][] => [
      ['GET', `/projects/${slug}/connections`],
      ['POST', `/projects/${slug}/connections`, { role_arn: ROLE }],
      ['GET', `/projects/${slug}/connections/${id}`],
      ['DELETE', `/projects/${slug}/connections/${id}`],
      ['POST', `/projects/${slug}/connections/${id}/check`, { bucket_arn: 'arn:aws:s3:::b' }],
    ];

    test('authorization: 401 without a valid token; a project-limited token gets the 404 of an unknown slug for another project, changing nothing', async () => {
      const own = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      const all = (await admin.token()).token;
      const theirs = await admin.call('POST', `/projects/${other.slug}/connections`, all, { role_arn: ROLE });
      assert.equal(theirs.status, 201, theirs.text);
      await assertTokenRequired(admin, routes(other.slug, theirs.body.id));
      const limited = (await admin.token(own.slug)).token;
      await assertOtherProjectHidden(admin, limited, routes(other.slug, theirs.body.id), other.slug);
      // Untouched: still there, never checked.
      const seen = await admin.call('GET', `/projects/${other.slug}/connections/${theirs.body.id}`, all);
      assert.equal(seen.status, 200);
      assert.equal(seen.body.last_check_at, null);
      // Its id named under the limited token's own project: not found, as if it did not exist.
      for (const [method, path, body] of routes(own.slug, theirs.body.id).slice(2)) {
        assertDetail(await admin.call(method, path, limited, body), 404, `No connection '${theirs.body.id}'.`);
      }
    });

    test('create a role connection: the external id and the policies to paste, then list, show (with a key prefix), delete', async () => {
      const { slug } = await createProjectWithKey(h.db.database);
      const token = (await admin.token(slug)).token;
      const queue = 'arn:aws:sqs:eu-west-1:444455556666:results';
      const created = await admin.call('POST', `/projects/${slug}/connections`, token, {
        role_arn: ROLE,
        allow: ['arn:aws:s3:::my-results', queue],
      });
      assert.equal(created.status, 201, created.text);
      const c = created.body;
      assert.match(c.id, /^conn_[0-9a-z]{26}$/);
      assert.match(c.external_id, /^barge-[A-Za-z0-9]{32}$/);
      assert.equal(c.project, slug);
      assert.equal(c.kind, 'assume_role');
      assert.equal(c.status, 'active');
      assert.equal(c.next_check_at, null);
      assert.deepEqual(c.policies, {
        principal_arn: PRINCIPAL,
        trust_policy: {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: { AWS: PRINCIPAL },
              Action: 'sts:AssumeRole',
              Condition: { StringEquals: { 'sts:ExternalId': c.external_id } },
            },
          ],
        },
        permission_policy: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: 's3:PutObject', Resource: 'arn:aws:s3:::my-results/convoy/*' },
            { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: queue },
          ],
        },
        placeholders: [],
      });

      const listed = await admin.call('GET', `/projects/${slug}/connections`, token);
      assert.equal(listed.status, 200);
      const { policies: _, ...plain } = c;
      assert.deepEqual(listed.body.data, [plain]);

      const shown = await admin.call('GET', `/projects/${slug}/connections/${c.id}?key_prefix=in/`, token);
      assert.equal(shown.status, 200, shown.text);
      assert.equal(shown.body.policies.permission_policy.Statement[0].Resource, 'arn:aws:s3:::my-results/in/*');
      assert.deepEqual(shown.body.policies.trust_policy, c.policies.trust_policy);
      assertInvalidField(
        await admin.call('GET', `/projects/${slug}/connections/${c.id}?key_prefix=in`, token),
        'key_prefix',
      );

      const deleted = await admin.call('DELETE', `/projects/${slug}/connections/${c.id}`, token);
      assert.deepEqual(deleted.body, { id: c.id, deleted: true });
      assertDetail(
        await admin.call('GET', `/projects/${slug}/connections/${c.id}`, token),
        404,
        `No connection '${c.id}'.`,
      );
      assertDetail(
        await admin.call('DELETE', `/projects/${slug}/connections/${c.id}`, token),
        404,
        `No connection '${c.id}'.`,
      );
    });

    test('create refusals, and static credentials: sealed, never shown, no role policies', async () => {
      const { slug } = await createProjectWithKey(h.db.database);
      const token = (await admin.token()).token;
      const create = (body: unknown) => admin.call('POST', `/projects/${slug}/connections`, token, body);
      assertInvalidField(await create({ role_arn: 'arn:aws:iam::1:role/x' }), '/role_arn');
      assertInvalidField(await create({ role_arn: ROLE, allow: ['arn:aws:s3:::b/key'] }), '/allow');
      assertInvalidField(await create({ role_arn: ROLE, region: 'Not A Region' }), '/region');
      assertInvalidField(await create({}), '');
      assertInvalidField(await create({ role_arn: ROLE, access_key_id: 'AKIA', secret_access_key: 's' }), '');
      assertInvalidField(await create({ role_arn: ROLE, bogus: 1 }), '/bogus');
      assertInvalidField(
        await create({ access_key_id: 'AKIA', secret_access_key: 's', endpoint: 'http://x/\u0000' }),
        '/endpoint',
      );
      assert.deepEqual((await admin.call('GET', `/projects/${slug}/connections`, token)).body.data, []);

      const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
      const made = await create({
        access_key_id: 'AKIAEXAMPLE',
        secret_access_key: secret,
        endpoint: 'http://127.0.0.1:9000',
        region: 'auto',
      });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.body.kind, 'static_credentials');
      assert.equal(made.body.policies, null);
      assert.equal(made.body.endpoint_url, 'http://127.0.0.1:9000');
      const shown = await admin.call('GET', `/projects/${slug}/connections/${made.body.id}`, token);
      for (const text of [made.text, shown.text]) {
        assert.ok(!text.includes(secret));
        assert.ok(!text.includes('AKIAEXAMPLE'));
      }
    });

    test('the capability check: each capability, once a minute (429 check_too_soon with Retry-After and next_check_at), role-only unlimited, refusals', async () => {
      const { slug } = await createProjectWithKey(h.db.database);
      const token = (await admin.token(slug)).token;
      const bucket = await rig.bucket();
      const created = await admin.call('POST', `/projects/${slug}/connections`, token, {
        role_arn: `${ROLE}-check`,
        allow: [`arn:aws:s3:::${bucket}`],
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id;
      // The customer pastes the trust policy: the role now trusts barge with this external id.
      rig.sts.addRole(`${ROLE}-check`, created.body.external_id);
      const check = (body: unknown) => admin.call('POST', `/projects/${slug}/connections/${id}/check`, token, body);

      const before = Date.now();
      const passed = await check({ bucket_arn: `arn:aws:s3:::${bucket}`, key_prefix: 'in/' });
      assert.equal(passed.status, 200, passed.text);
      assert.equal(passed.body.ok, true);
      assert.equal(passed.body.connection_id, id);
      assert.equal(passed.body.target, `arn:aws:s3:::${bucket}`);
      assert.equal(passed.body.object_key, 'in/svc-verify.json');
      assert.deepEqual(
        passed.body.capabilities.map((c: { capability: string; status: string }) => [c.capability, c.status]),
        [
          ['assume_role', 'ok'],
          ['put_object', 'ok'],
          ['encryption_key', 'not_used'],
        ],
      );
      const written = await rig.s3.getObject(bucket, 'in/svc-verify.json');
      assert.equal(written.body.toString('utf8'), '{"convoy_verification":true}');
      const nextAt = Date.parse(passed.body.next_check_at);
      assert.ok(nextAt >= before + 60_000 && nextAt <= Date.now() + 60_000, passed.body.next_check_at);
      const shown = await admin.call('GET', `/projects/${slug}/connections/${id}`, token);
      assert.equal(shown.body.next_check_at, passed.body.next_check_at);

      const again = await check({ bucket_arn: `arn:aws:s3:::${bucket}` });
      assert.equal(again.status, 429, again.text);
      assert.equal(again.body.detail.error, 'check_too_soon');
      assert.match(again.body.detail.message, /ran less than 60 s ago \(checks write a real object\): wait \d+ s\.$/);
      const retryAfter = Number(again.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
      assert.ok(Math.abs(Date.parse(again.body.detail.next_check_at) - nextAt) < 1000, again.text);

      const roleOnly = await check({ bucket_arn: `arn:aws:s3:::${bucket}`, role_only: true });
      assert.equal(roleOnly.status, 200, roleOnly.text);
      assert.deepEqual(
        roleOnly.body.capabilities.map((c: { status: string }) => c.status),
        ['ok', 'skipped', 'skipped'],
      );
      assert.equal(roleOnly.body.object_key, null);

      assertInvalidField(await check({}), '');
      assertInvalidField(await check({ bucket_arn: `arn:aws:s3:::${bucket}`, queue_url: 'https://x' }), '');
      assertInvalidField(await check({ bucket_arn: 'not-an-arn' }), '/bucket_arn');
      assertInvalidField(await check({ bucket_arn: `arn:aws:s3:::${bucket}`, key_prefix: 'a/../' }), '/key_prefix');
      const offList = await check({ bucket_arn: 'arn:aws:s3:::another-bucket' });
      assert.equal(offList.status, 422, offList.text);
      assert.equal(offList.body.detail.error, 'target_not_allowed');
    });
  });
}
