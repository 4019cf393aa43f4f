/**
 * Model policy on every backend: models the catalog does not list (refused in production, accepted
 * in development), and a project's allowlist for single and records cargo and for GET /models.
 * Providers are enabled by their settings only (fake keys, loopback addresses): nothing calls a
 * provider at submit, and these services run no workers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Config, loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/domain/clock.js';
import { setProjectModels } from '../../src/operations/set-project-models.js';
import { createProjectWithKey, startTestApp, storedCargo, type TestApp } from '../helpers/app.js';
import { assertInvalidField } from '../helpers/assertions.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

const PROVIDERS = {
  ANTHROPIC_API_KEY: 'sk-ant-test-0000000000',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
  OPENAI_API_KEY: 'sk-test-0000000000',
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  BARGE_BEDROCK_ROLE_ARN: 'arn:aws:iam::123456789012:role/barge-bedrock',
  BARGE_BEDROCK_S3_URI: 's3://barge-test/batches/',
  BARGE_AWS_BEDROCK_ENDPOINT: 'http://127.0.0.1:9',
};
/** A deployment with every provider enabled, in the given mode (its default for unlisted models). */
const deployment = (env: 'production' | 'development'): Partial<Config> => {
  const config = loadConfig({ BARGE_LOG_LEVEL: 'silent', ...PROVIDERS, BARGE_ENV: env });
  return { providers: config.providers, models: config.models, allowUnlistedModels: config.allowUnlistedModels };
};

const UNLISTED = [
  'anthropic/claude-3-opus-20240229',
  'openai/ft:gpt-4o-mini-2024-07-18:acme::abc123',
  'bedrock/amazon.nova-pro-v1:0',
  'arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abcdef123456',
];

const messages = [{ role: 'user', content: 'hi' }];
const single = (model: string) => ({ params: { model, messages } });
const records = (model: string) => ({
  params: { model },
  records: [
    { recordId: 'a', modelInput: { messages } },
    { recordId: 'b', modelInput: { messages } },
  ],
});

for (const backend of await backends()) {
  describe(`model policy on ${backend.name}`, () => {
    let db: TestDatabase;
    let production: TestApp;
    let development: TestApp;
    before(async () => {
      db = await backend.create();
      production = await startTestApp(db.database, { config: deployment('production') });
      development = await startTestApp(db.database, { config: deployment('development') });
    });
    after(async () => {
      for (const app of [production, development]) await app?.close();
      await db.drop();
    });
    const deps = () => ({ database: db.database, clock: systemClock });
    const cargoCount = async (projectId: string) =>
      Number(
        (
          await db.database.read
            .selectFrom('cargo')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('project_id', '=', projectId)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('production refuses a qualified name or ARN the catalog does not list: 400 naming it, nothing stored', async () => {
      const { key, projectId } = await createProjectWithKey(db.database);
      for (const model of UNLISTED) {
        for (const payload of [single(model), records(model)]) {
          const res = await production.request('POST', '/cargo/load', { key, body: payload });
          assertInvalidField(res, '/params/model');
          assert.ok(res.body.detail.includes(`'${model}'`), res.body.detail);
          assert.match(res.body.detail, /not in this deployment's catalog/);
        }
      }
      assert.equal(await cargoCount(projectId), 0);
    });

    test('development accepts them, routed as named', async () => {
      const { key } = await createProjectWithKey(db.database);
      for (const model of UNLISTED) {
        const res = await development.request('POST', '/cargo/load', { key, body: single(model) });
        assert.equal(res.status, 200, `${model}: ${res.text}`);
        const row = await storedCargo(db.database, res.body.cargo_id);
        assert.equal(row.model, model);
      }
    });

    test("a qualified name that is a catalog route's model is that catalog model, in production too", async () => {
      const { key } = await createProjectWithKey(db.database);
      const res = await production.request('POST', '/cargo/load', {
        key,
        body: single('anthropic/claude-sonnet-4-5-20250929'),
      });
      assert.equal(res.status, 200, res.text);
      const row = await storedCargo(db.database, res.body.cargo_id);
      assert.deepEqual([row.provider, row.provider_model], ['anthropic', 'claude-sonnet-4-5-20250929']);
      // And the allowlist sees it by its catalog id.
      const { slug, key: other } = await createProjectWithKey(db.database);
      assert.equal((await setProjectModels(deps(), { slug, allow: ['claude-sonnet-*'] })).ok, true);
      const allowed = await production.request('POST', '/cargo/load', {
        key: other,
        body: single('bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0'),
      });
      assert.equal(allowed.status, 200, allowed.text);
    });

    test('an allowlist: single and records cargo outside it are 403 model_not_allowed and stored nowhere', async () => {
      const { key, slug, projectId } = await createProjectWithKey(db.database);
      const set = await setProjectModels(deps(), { slug, allow: ['claude-*', 'svc-mock'] });
      assert.equal(set.ok, true);
      for (const model of ['claude-sonnet-4-5', 'svc-mock']) {
        for (const payload of [single(model), records(model)]) {
          const res = await production.request('POST', '/cargo/load', { key, body: payload });
          assert.equal(res.status, 200, `${model}: ${res.text}`);
        }
      }
      const before = await cargoCount(projectId);
      for (const model of ['gpt-4o-mini', 'openai/gpt-4o-mini']) {
        for (const payload of [single(model), records(model)]) {
          const res = await production.request('POST', '/cargo/load', { key, body: payload });
          assert.equal(res.status, 403, res.text);
          assert.deepEqual(res.body, {
            detail: {
              error: 'model_not_allowed',
              message: `This project may not use the model '${model}'.`,
              model,
            },
          });
        }
      }
      // An unlisted name is matched whole (development accepts unlisted names).
      const unlisted = 'openai/gpt-4o-2024-08-06';
      assert.equal((await development.request('POST', '/cargo/load', { key, body: single(unlisted) })).status, 403);
      assert.equal(await cargoCount(projectId), before);
      await setProjectModels(deps(), { slug, allow: ['openai/gpt-4o-*'] });
      assert.equal((await development.request('POST', '/cargo/load', { key, body: single(unlisted) })).status, 200);
      // --all: every model again.
      await setProjectModels(deps(), { slug, allow: null });
      assert.equal((await production.request('POST', '/cargo/load', { key, body: single('gpt-4o-mini') })).status, 200);
    });

    test('GET /models lists only what the project may use', async () => {
      const { key, slug } = await createProjectWithKey(db.database);
      const ids = async () => {
        const res = await production.request('GET', '/models', { key });
        assert.equal(res.status, 200, res.text);
        return res.body.data.map((m: { id: string }) => m.id);
      };
      const everything = await ids();
      assert.ok(everything.includes('gpt-4o-mini') && everything.includes('claude-sonnet-4-5'));
      await setProjectModels(deps(), { slug, allow: ['claude-sonnet-*', 'svc-mock'] });
      assert.deepEqual(
        await ids(),
        everything.filter((id: string) => id === 'svc-mock' || id.startsWith('claude-sonnet-')),
      );
      await setProjectModels(deps(), { slug, allow: ['nothing-*'] });
      assert.deepEqual(await ids(), []);
    });

    test('the operation refuses bad patterns and unknown projects', async () => {
      const { slug } = await createProjectWithKey(db.database);
      for (const allow of [[], ['claude sonnet'], ['']]) {
        const res = await setProjectModels(deps(), { slug, allow });
        assert.equal(res.ok, false);
        assert.equal(!res.ok && res.error.code, 'invalid_model_pattern');
      }
      const missing = await setProjectModels(deps(), { slug: 'no-such-project', allow: null });
      assert.equal(!missing.ok && missing.error.code, 'project_not_found');
    });
  });
}
