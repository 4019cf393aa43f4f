/** Object delivery's submit rules on every backend: key prefixes, the connection, its allow-list, the check order. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newExternalId } from '../../src/domain/connections.js';
import { newId } from '../../src/domain/ids.js';
import { insertConnection } from '../../src/store/admin/connections.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { assertDetail, assertInvalidField } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

for (const backend of await backends()) {
  describe(`object-delivery submit rules on ${backend.name}`, () => {
    const h = harness(backend);

    const connectionOf = async (projectId: string, allow: string[] | null = null) =>
      insertConnection(h.db.database, {
        id: newId('conn'),
        projectId,
        roleArn: 'arn:aws:iam::444455556666:role/barge',
        externalId: newExternalId(),
        allowedTargets: allow,
        endpointUrl: null,
        region: null,
        sealedCredentials: null,
        now: Date.now(),
      });
    const withTarget = (callback: Record<string, unknown>) =>
      mockBody('to a bucket', { callback: { type: 'object_store', ...callback } });
    const storedCallback = async (cargoId: string) => {
      const row = await h.db.database.write
        .selectFrom('cargo')
        .select('callback')
        .where('id', '=', cargoId)
        .executeTakeFirst();
      return JSON.parse(row?.callback ?? 'null');
    };

    test('a valid target is accepted and stored with the default prefix convoy/', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const connection = await connectionOf(projectId);
      const res = await h.app.request('POST', '/cargo/load', {
        key,
        body: withTarget({ connection_id: connection.id, bucket_arn: 'arn:aws:s3:::customer-results' }),
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(await storedCallback(res.body.cargo_id), {
        type: 'object_store',
        connection_id: connection.id,
        bucket_arn: 'arn:aws:s3:::customer-results',
        key_prefix: 'convoy/',
      });
    });

    test('accepted key prefixes: the empty prefix (bucket root) and safe characters ending in /', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const connection = await connectionOf(projectId);
      for (const prefix of ['', 'a/', 'results/2026/11/', "Mixed-Case_0.9!'()/x/", 'deep/'.repeat(100)]) {
        const res = await h.app.request('POST', '/cargo/load', {
          key,
          body: withTarget({
            connection_id: connection.id,
            bucket_arn: 'arn:aws:s3:::my.bucket-1',
            key_prefix: prefix,
          }),
        });
        assert.equal(res.status, 200, `${JSON.stringify(prefix)}: ${res.text}`);
        assert.equal((await storedCallback(res.body.cargo_id)).key_prefix, prefix);
      }
    });

    test('every invalid key prefix answers 422 invalid_key_prefix with its reason', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const connection = await connectionOf(projectId);
      const cases: [string, string][] = [
        ['results', "key_prefix 'results' must end with '/'."],
        ['/results/', "key_prefix '/results/' must not start with '/'."],
        ['/', "key_prefix '/' must not start with '/'."],
        ['a/../b/', "key_prefix 'a/../b/' must not contain a '.' or '..' segment."],
        ['../', "key_prefix '../' must not contain a '.' or '..' segment."],
        ['a/..', "key_prefix 'a/..' must end with '/'."],
        [
          'with space/',
          "key_prefix 'with space/' may contain only letters, digits, '/' and the characters ! - _ . ' ( ) (no * or ?).",
        ],
        [
          'ünicode/',
          "key_prefix 'ünicode/' may contain only letters, digits, '/' and the characters ! - _ . ' ( ) (no * or ?).",
        ],
        [
          'q?x/',
          "key_prefix 'q?x/' may contain only letters, digits, '/' and the characters ! - _ . ' ( ) (no * or ?).",
        ],
        [
          'back\\slash/',
          "key_prefix 'back\\slash/' may contain only letters, digits, '/' and the characters ! - _ . ' ( ) (no * or ?).",
        ],
        [
          'a%2F/',
          "key_prefix 'a%2F/' may contain only letters, digits, '/' and the characters ! - _ . ' ( ) (no * or ?).",
        ],
        [
          `${'x'.repeat(989)}/`,
          `key_prefix '${'x'.repeat(989)}/' must be at most 989 bytes, so the object key stays within 1024 bytes.`,
        ],
      ];
      for (const [prefix, message] of cases) {
        const res = await h.app.request('POST', '/cargo/load', {
          key,
          body: withTarget({ connection_id: connection.id, bucket_arn: 'arn:aws:s3:::bucket', key_prefix: prefix }),
        });
        assertDetail(res, 422, { error: 'invalid_key_prefix', message });
      }
    });

    test('an unknown connection id answers 422 connection_not_found', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const res = await h.app.request('POST', '/cargo/load', {
        key,
        body: withTarget({ connection_id: 'conn_nope', bucket_arn: 'arn:aws:s3:::bucket' }),
      });
      assertDetail(res, 422, { error: 'connection_not_found', message: "No connection 'conn_nope' in this project." });
    });

    test("another project's connection id is answered exactly like a missing one", async () => {
      const other = await createProjectWithKey(h.db.database);
      const theirs = await connectionOf(other.projectId);
      const { key } = await createProjectWithKey(h.db.database);
      const res = await h.app.request('POST', '/cargo/load', {
        key,
        body: withTarget({ connection_id: theirs.id, bucket_arn: 'arn:aws:s3:::bucket' }),
      });
      assertDetail(res, 422, {
        error: 'connection_not_found',
        message: `No connection '${theirs.id}' in this project.`,
      });
      // The owner may use it.
      const own = await h.app.request('POST', '/cargo/load', {
        key: other.key,
        body: withTarget({ connection_id: theirs.id, bucket_arn: 'arn:aws:s3:::bucket' }),
      });
      assert.equal(own.status, 200, own.text);
    });

    test("a bucket off the connection's allow-list answers 422 target_not_allowed; one on it is accepted", async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const connection = await connectionOf(projectId, ['arn:aws:s3:::allowed-one', 'arn:aws:s3:::allowed-two']);
      const refused = await h.app.request('POST', '/cargo/load', {
        key,
        body: withTarget({ connection_id: connection.id, bucket_arn: 'arn:aws:s3:::elsewhere' }),
      });
      assertDetail(refused, 422, {
        error: 'target_not_allowed',
        message: `Bucket 'arn:aws:s3:::elsewhere' is not on the allow-list of connection '${connection.id}'.`,
      });
      for (const bucket of ['allowed-one', 'allowed-two']) {
        const ok = await h.app.request('POST', '/cargo/load', {
          key,
          body: withTarget({ connection_id: connection.id, bucket_arn: `arn:aws:s3:::${bucket}` }),
        });
        assert.equal(ok.status, 200, ok.text);
      }
      // A connection without an allow-list takes any bucket.
      const open = await connectionOf(projectId);
      const any = await h.app.request('POST', '/cargo/load', {
        key,
        body: withTarget({ connection_id: open.id, bucket_arn: 'arn:aws:s3:::elsewhere' }),
      });
      assert.equal(any.status, 200, any.text);
    });

    test('a bucket_arn that is not a bucket ARN, or names a key path, answers 400', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const connection = await connectionOf(projectId);
      for (const bucketArn of [
        'arn:aws:s3:::bucket/some/key',
        'arn:aws:s3:::bucket/',
        'bucket',
        's3://bucket',
        'arn:aws:s3:::Upper-Case',
        'arn:aws:s3:::ab',
        'arn:aws:s3:::bad..name',
        'arn:aws:s3:::192.168.1.1',
        'arn:aws:s3:us-east-1::bucket',
        'arn:aws:iam::444455556666:role/x',
      ]) {
        const res = await h.app.request('POST', '/cargo/load', {
          key,
          body: withTarget({ connection_id: connection.id, bucket_arn: bucketArn }),
        });
        assertInvalidField(res, '/callback/bucket_arn');
      }
      const missing = await h.app.request('POST', '/cargo/load', {
        key,
        body: withTarget({ connection_id: connection.id }),
      });
      assertInvalidField(missing, '/callback/bucket_arn');
    });

    test('check order: authentication, then body validation (400), then the 422 target rules', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const badTarget = { connection_id: 'conn_nope', bucket_arn: 'arn:aws:s3:::bucket', key_prefix: 'nope' };
      const unauthenticated = await h.app.request('POST', '/cargo/load', { body: withTarget(badTarget) });
      assert.equal(unauthenticated.status, 401);
      const badBody = await h.app.request('POST', '/cargo/load', {
        key,
        body: { ...withTarget(badTarget), params: { model: 'svc-mock', messages: [], temperature: 3 } },
      });
      assert.equal(badBody.status, 400, badBody.text);
      const badArn = await h.app.request('POST', '/cargo/load', {
        key,
        body: withTarget({ ...badTarget, bucket_arn: 'not-an-arn' }),
      });
      assertInvalidField(badArn, '/callback/bucket_arn');
      // Of the 422 rules, the connection comes first.
      const unknown = await h.app.request('POST', '/cargo/load', { key, body: withTarget(badTarget) });
      assertDetail(unknown, 422, {
        error: 'connection_not_found',
        message: "No connection 'conn_nope' in this project.",
      });
    });
  });
}
