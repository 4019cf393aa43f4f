/** The connection operations on every backend: role and static-credential connections, refusals, list, show, delete. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PRINCIPAL_PLACEHOLDER } from '../../src/domain/connection-policies.js';
import { openSecret } from '../../src/domain/secret-box.js';
import { createConnection } from '../../src/operations/create-connection.js';
import { deleteConnection } from '../../src/operations/delete-connection.js';
import { listConnections } from '../../src/operations/list-connections.js';
import { showConnection } from '../../src/operations/show-connection.js';
import { findConnection } from '../../src/store/admin/connections.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { depsOf, newProject, refused, value } from './support.js';

const ROLE = 'arn:aws:iam::444455556666:role/barge-delivery';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

for (const backend of await backends()) {
  describe(`connection operations on ${backend.name}`, () => {
    let db: TestDatabase;
    let base: ReturnType<typeof depsOf>;
    const secretKey = randomBytes(32);
    const deps = () => ({ ...base, config: { secretKey } });
    const showDeps = () => ({ ...base, config: { objectStore: { principalArn: null } } });
    before(async () => {
      db = await backend.create();
      base = depsOf(db.database);
    });
    after(() => db.drop());

    const connectionCount = async (projectId: string) =>
      (await db.database.read.selectFrom('connections').select('id').where('project_id', '=', projectId).execute())
        .length;

    test('createConnection with a role: an external id, and an allow-list of every kind of target, deduplicated', async () => {
      const project = await newProject(base);
      const allow = [
        'arn:aws:s3:::bucket-one',
        'arn:aws:sqs:us-east-1:444455556666:results',
        'arn:aws:sns:eu-west-1:444455556666:done.fifo',
        'arn:aws:events:us-east-1:444455556666:event-bus/barge',
        'arn:aws:s3:::bucket-one',
      ];
      const { connection, projectSlug } = value(
        await createConnection(deps(), { slug: project.slug, roleArn: ROLE, allow }),
      );
      assert.equal(projectSlug, project.slug);
      assert.match(connection.id, /^conn_[0-9a-z]{26}$/);
      assert.match(connection.externalId, /^barge-[A-Za-z0-9]{32}$/);
      assert.equal(connection.roleArn, ROLE);
      assert.deepEqual(connection.allowedTargets, allow.slice(0, 4));
      assert.equal(connection.sealedCredentials, null);
      assert.equal(connection.status, 'active');
      assert.equal(connection.createdAt, base.clock.now());
      assert.deepEqual(await findConnection(db.database, connection.id), connection);

      const open = value(await createConnection(deps(), { slug: project.slug, roleArn: ROLE, allow: [] }));
      assert.equal(open.connection.allowedTargets, null, 'no allow-list: any target');
    });

    test('createConnection with static credentials seals them with the secret key, bound to the row', async () => {
      const project = await newProject(base);
      let reads = 0;
      const { connection } = value(
        await createConnection(deps(), {
          slug: project.slug,
          accessKeyId: 'AKIAEXAMPLE',
          secretAccessKey: async () => {
            reads++;
            return SECRET;
          },
          endpoint: 'https://minio.example.test:9000/',
          region: 'garage',
        }),
      );
      assert.equal(reads, 1);
      assert.equal(connection.roleArn, null);
      assert.equal(connection.endpointUrl, 'https://minio.example.test:9000', 'trailing slashes dropped');
      assert.equal(connection.region, 'garage');
      const sealed = connection.sealedCredentials as string;
      assert.ok(sealed.startsWith('v1:') && !sealed.includes(SECRET));
      assert.deepEqual(JSON.parse(openSecret(secretKey, sealed, connection.id) as string), {
        accessKeyId: 'AKIAEXAMPLE',
        secretAccessKey: SECRET,
      });
      // The secret may be given as a plain string too.
      value(
        await createConnection(deps(), { slug: project.slug, accessKeyId: 'AKIAEXAMPLE', secretAccessKey: SECRET }),
      );
    });

    test('createConnection refuses bad input, each with its code, and stores nothing', async () => {
      const project = await newProject(base);
      const slug = project.slug;
      const never = async (): Promise<string> => assert.fail('the secret is read only once all else is accepted');
      const cases: [Parameters<typeof createConnection>[1], string, RegExp][] = [
        [{ slug }, 'invalid_access', /either a role ARN, or static credentials/],
        [{ slug, roleArn: ROLE, accessKeyId: 'AKIA', secretAccessKey: never }, 'invalid_access', /either/],
        [
          { slug, roleArn: 'arn:aws:iam::1:role/x' },
          'invalid_role_arn',
          /^invalid role_arn 'arn:aws:iam::1:role\/x': use/,
        ],
        [{ slug, roleArn: ROLE, endpoint: 'https://s3.example.test' }, 'endpoint_with_role', /BARGE_AWS_S3_ENDPOINT/],
        [{ slug, roleArn: ROLE, region: 'US East' }, 'invalid_region', /^invalid region 'US East'$/],
        [{ slug, roleArn: ROLE, allow: ['arn:aws:s3:::b/key'] }, 'invalid_allow_entry', /must name a bucket only/],
        [{ slug, roleArn: ROLE, allow: ['arn:aws:s3:::B'] }, 'invalid_allow_entry', /not a valid bucket name/],
        [
          { slug, roleArn: ROLE, allow: ['arn:aws:s3:::ok-bucket', 'arn:aws:sqs:nowhere'] },
          'invalid_allow_entry',
          /^invalid allow 'arn:aws:sqs:nowhere': give the ARN of a bucket/,
        ],
        [
          { slug, accessKeyId: 'AKIA', secretAccessKey: never, endpoint: 'ftp://store.test' },
          'invalid_endpoint',
          /^invalid endpoint 'ftp:\/\/store.test': use an http\(s\) URL/,
        ],
        [
          { slug, accessKeyId: 'AKIA', secretAccessKey: never, endpoint: 'https://user:pw@store.test' },
          'invalid_endpoint',
          /without credentials/,
        ],
        [
          { slug, accessKeyId: 'AKIA', secretAccessKey: never, endpoint: 'https://store.test/?x=1' },
          'invalid_endpoint',
          /query/,
        ],
        [{ slug: 'no-such-project', roleArn: ROLE }, 'project_not_found', /^no project 'no-such-project'$/],
        [{ slug, accessKeyId: 'AKIA' }, 'incomplete_credentials', /both an access key id and a secret access key/],
        [{ slug, secretAccessKey: never }, 'incomplete_credentials', /both/],
        [{ slug, accessKeyId: '', secretAccessKey: never }, 'incomplete_credentials', /both/],
        [
          { slug, accessKeyId: 'AKIA', secretAccessKey: async () => '  ' },
          'empty_secret',
          /secret access key is empty/,
        ],
      ];
      for (const [input, code, message] of cases) {
        refused(await createConnection(deps(), input), code as never, message);
      }
      const details = refused(
        await createConnection(deps(), { slug, roleArn: ROLE, allow: ['arn:aws:s3:::b/key'] }),
        'invalid_allow_entry',
      );
      assert.deepEqual(details.input, {
        name: 'allow',
        value: 'arn:aws:s3:::b/key',
        problem: 'must name a bucket only, without a key path',
      });
      // Static credentials without a secret key configured: refused before the secret is read.
      refused(
        await createConnection(
          { ...base, config: { secretKey: null } },
          { slug, accessKeyId: 'AKIA', secretAccessKey: never },
        ),
        'secret_key_missing',
        /^BARGE_SECRET_KEY must be set/,
      );
      assert.equal(await connectionCount(project.id), 0);
    });

    test('listConnections, showConnection and deleteConnection; unknown ones are refused', async () => {
      const project = await newProject(base);
      const first = value(await createConnection(deps(), { slug: project.slug, roleArn: ROLE })).connection;
      base.clock.advance(1);
      const second = value(await createConnection(deps(), { slug: project.slug, roleArn: `${ROLE}-2` })).connection;
      const listed = value(await listConnections(base, { slug: project.slug }));
      assert.equal(listed.project.id, project.id);
      assert.deepEqual(listed.connections, [first, second]);
      refused(await listConnections(base, { slug: 'no-such-project' }), 'project_not_found');

      const shown = value(await showConnection(showDeps(), { connectionId: first.id }));
      assert.deepEqual({ ...shown, policies: null }, { connection: first, projectSlug: project.slug, policies: null });
      // No principal configured, no allow-list: the policies name what to fill in.
      assert.equal(shown.policies?.placeholders[0], PRINCIPAL_PLACEHOLDER);
      assert.equal(shown.policies?.permissionPolicy.Statement.length, 4);
      // Named under its project, or another: found, or not found as if it did not exist.
      assert.ok(value(await showConnection(showDeps(), { connectionId: first.id, slug: project.slug })));
      const other = await newProject(base);
      refused(await showConnection(showDeps(), { connectionId: first.id, slug: other.slug }), 'connection_not_found');
      refused(await deleteConnection(base, { connectionId: first.id, slug: other.slug }), 'connection_not_found');
      refused(await showConnection(showDeps(), { connectionId: first.id, slug: 'no-such' }), 'project_not_found');
      refused(await showConnection(showDeps(), { connectionId: first.id, keyPrefix: '../x/' }), 'invalid_key_prefix');
      assert.deepEqual(value(await deleteConnection(base, { connectionId: first.id })), { connectionId: first.id });
      refused(await showConnection(showDeps(), { connectionId: first.id }), 'connection_not_found', /^no connection '/);
      refused(await deleteConnection(base, { connectionId: first.id }), 'connection_not_found');
      assert.deepEqual(
        value(await listConnections(base, { slug: project.slug })).connections.map((c) => c.id),
        [second.id],
      );
    });
  });
}
