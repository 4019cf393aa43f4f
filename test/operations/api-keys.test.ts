/** The API key operations: parsing an expiry, and creating, listing and deactivating keys on every backend. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashApiKey } from '../../src/domain/api-keys.js';
import { createApiKey, parseExpiry } from '../../src/operations/create-api-key.js';
import { deactivateApiKey } from '../../src/operations/deactivate-api-key.js';
import { listApiKeys } from '../../src/operations/list-api-keys.js';
import { setProjectActive } from '../../src/operations/set-project-active.js';
import { findKeyCredentials } from '../../src/store/admin/api-keys.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { depsOf, newProject, refused, value } from './support.js';

const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);

describe('parseExpiry', () => {
  test('reads ISO 8601 dates and date-times; without a zone it is UTC', () => {
    const cases: [string, number][] = [
      ['2027-01-31', Date.UTC(2027, 0, 31)],
      ['2027-01-31T00:00:00Z', Date.UTC(2027, 0, 31)],
      ['2027-01-31T10:20', Date.UTC(2027, 0, 31, 10, 20)],
      ['2027-01-31 10:20:30', Date.UTC(2027, 0, 31, 10, 20, 30)],
      ['2027-01-31T10:20:30.5', Date.UTC(2027, 0, 31, 10, 20, 30, 500)],
      ['2027-01-31T10:20:30.123456Z', Date.UTC(2027, 0, 31, 10, 20, 30, 123)],
      ['2027-01-31T10:20+02:00', Date.UTC(2027, 0, 31, 8, 20)],
      ['2027-01-31T10:20-0530', Date.UTC(2027, 0, 31, 15, 50)],
      ['2028-02-29', Date.UTC(2028, 1, 29)],
      ['2027-01-31T24:00:00Z', Date.UTC(2027, 1, 1)],
    ];
    for (const [raw, ms] of cases) assert.deepEqual(parseExpiry(raw, NOW), { ms }, raw);
  });

  test('agrees with Date.parse wherever a zone is given', () => {
    for (const raw of [
      '2027-03-04T05:06:07Z',
      '2027-03-04T05:06+01:00',
      '2030-12-31T23:59:59.999-08:00',
      '2027-01-31',
    ]) {
      assert.deepEqual(parseExpiry(raw, NOW), { ms: Date.parse(raw) }, raw);
    }
  });

  test('refuses what is not an ISO 8601 calendar date, and what is not in the future', () => {
    const format = { problem: 'use an ISO 8601 date, e.g. 2027-01-31T00:00:00Z' };
    for (const raw of [
      'tomorrow',
      '2027-02-30',
      '2027-02-29',
      '2027-13-01',
      '2027-00-10',
      '2027-01-00',
      '2027-1-5',
      '2027-01-31T25:00',
      '2027-01-31T24:30Z',
      '2027-01-31T10:60',
      '2027-01-31T10:20:60Z',
      '2027-01-31T10Z',
      '2027-01-31T10:20+24:00',
      '2027-01-31Z',
      '1798761600000',
      '',
    ]) {
      assert.deepEqual(parseExpiry(raw, NOW), format, raw);
    }
    const past = { problem: 'it is not in the future' };
    assert.deepEqual(parseExpiry('2000-01-01T00:00:00Z', NOW), past);
    assert.deepEqual(parseExpiry('0099-01-01', NOW), past);
    assert.deepEqual(parseExpiry('2026-06-15T12:00:00Z', NOW), past, 'now itself is not the future');
    assert.deepEqual(parseExpiry('2026-06-15T12:00:00.001Z', NOW), { ms: NOW + 1 });
  });
});

for (const backend of await backends()) {
  describe(`API key operations on ${backend.name}`, () => {
    let db: TestDatabase;
    let deps: ReturnType<typeof depsOf>;
    before(async () => {
      db = await backend.create();
      deps = depsOf(db.database, undefined);
      deps.clock.set(NOW);
    });
    after(() => db.drop());

    test('createApiKey returns the full key once and stores only its hash', async () => {
      const project = await newProject(deps);
      const created = value(await createApiKey(deps, { slug: project.slug, name: 'ci runner' }));
      assert.match(created.key, /^barge_sk_[A-Za-z0-9]{32}$/);
      assert.equal(created.apiKey.keyPrefix, created.key.slice(0, 12));
      assert.equal(created.apiKey.name, 'ci runner');
      assert.equal(created.apiKey.expiresAt, null);
      assert.equal(created.apiKey.createdAt, NOW);
      assert.equal(created.project.id, project.id);
      const credentials = await findKeyCredentials(db.database, hashApiKey(created.key));
      assert.equal(credentials?.keyId, created.apiKey.id);

      const expiring = value(
        await createApiKey(deps, { slug: project.slug, name: 'temp', expiresAt: '2027-01-31T00:00' }),
      );
      assert.equal(expiring.apiKey.expiresAt, Date.UTC(2027, 0, 31));
    });

    test('createApiKey refuses an empty name, a bad or past expiry and an unknown project, creating nothing', async () => {
      const project = await newProject(deps);
      const blank = refused(await createApiKey(deps, { slug: project.slug, name: '  ' }), 'invalid_key_name');
      assert.deepEqual(blank.input, { name: 'name', value: '  ', problem: 'must not be empty' });
      for (const expiresAt of ['tomorrow', '2027-02-30']) {
        const error = refused(
          await createApiKey(deps, { slug: project.slug, name: 'x', expiresAt }),
          'invalid_expiry',
          new RegExp(`^invalid expires_at '${expiresAt}': use an ISO 8601 date`),
        );
        assert.deepEqual(error.input, {
          name: 'expiresAt',
          value: expiresAt,
          problem: 'use an ISO 8601 date, e.g. 2027-01-31T00:00:00Z',
        });
      }
      refused(
        await createApiKey(deps, { slug: project.slug, name: 'x', expiresAt: '2026-06-15T11:59:59Z' }),
        'invalid_expiry',
        /it is not in the future$/,
      );
      refused(
        await createApiKey(deps, { slug: 'no-such-project', name: 'x' }),
        'project_not_found',
        /^no project 'no-such-project'$/,
      );
      assert.deepEqual(value(await listApiKeys(deps, { slug: project.slug })).keys, []);
    });

    test('listApiKeys lists a project’s keys, oldest first; an unknown project is refused', async () => {
      const project = await newProject(deps);
      const first = value(await createApiKey(deps, { slug: project.slug, name: 'first' }));
      deps.clock.advance(1);
      const second = value(await createApiKey(deps, { slug: project.slug, name: 'second' }));
      const listed = value(await listApiKeys(deps, { slug: project.slug }));
      assert.equal(listed.project.slug, project.slug);
      assert.deepEqual(
        listed.keys.map((k) => k.id),
        [first.apiKey.id, second.apiKey.id],
      );
      assert.ok(listed.keys.every((k) => !('key' in k) && k.isActive));
      refused(await listApiKeys(deps, { slug: 'no-such-project' }), 'project_not_found');
    });

    test('deactivateApiKey turns a key off; an unknown key is refused', async () => {
      const project = await newProject(deps);
      const created = value(await createApiKey(deps, { slug: project.slug, name: 'doomed' }));
      const off = value(await deactivateApiKey(deps, { keyId: created.apiKey.id }));
      assert.equal(off.id, created.apiKey.id);
      assert.equal(off.isActive, false);
      assert.equal((await findKeyCredentials(db.database, hashApiKey(created.key)))?.keyIsActive, false);
      refused(
        await deactivateApiKey(deps, { keyId: 'key_01jd5q3k8m9x2v4w6y8z0a1b2c' }),
        'api_key_not_found',
        /^no key 'key_01jd5q3k8m9x2v4w6y8z0a1b2c'$/,
      );
      // A deactivated project keeps its keys listed.
      value(await setProjectActive(deps, { slug: project.slug, active: false }));
      assert.equal(value(await listApiKeys(deps, { slug: project.slug })).keys.length, 1);
    });
  });
}
