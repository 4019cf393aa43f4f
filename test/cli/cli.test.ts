/**
 * The built `barge` command as installed, on SQLite and PostgreSQL: project, key, usage and migrate commands, their
 * refusals and `--json` output, and `barge serve`'s first start in development.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createApiKey } from '../../src/store/admin/api-keys.js';
import { openDatabase } from '../../src/store/database.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { assertDetail } from '../helpers/assertions.js';
import { type Backend, backends, PG_URL } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { assertBuildIsFresh, killAtExit, nodeFlagsOf } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

/** The built command, as installed (`npm test` builds it first). */
const MAIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
const KEY = /barge_sk_[A-Za-z0-9]{32}/;
const ADMIN_TOKEN = /^barge_at_[A-Za-z0-9]{32}$/;
const WEBHOOK_SECRET = /whsec_[A-Za-z0-9+/]{43}=/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of every child: nothing BARGE_* inherited from the test run. */
function childEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('BARGE_') && name !== 'HOST' && name !== 'PORT') env[name] = value;
  }
  return { ...env, BARGE_DATABASE_URL: databaseUrl, ...extra };
}

function barge(databaseUrl: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: childEnv(databaseUrl), timeout: 20_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** --json prints exactly one JSON object, on one line, and nothing else. */
function oneJsonObject(run: Run): any {
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `one line of output, got: ${run.stdout}`);
  const value = JSON.parse(lines[0] as string);
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), run.stdout);
  return value;
}

function ok(run: Run, what = 'command'): Run {
  assert.equal(run.code, 0, `${what}: exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run;
}

/** A failure: non-zero exit, the message on stderr, and with --json an {error} object on stdout. */
function failed(run: Run, message: RegExp, json = true): void {
  assert.notEqual(run.code, 0, `expected failure, got exit 0: ${run.stdout}`);
  assert.match(run.stderr, message);
  if (json) {
    const body = oneJsonObject(run);
    assert.deepEqual(Object.keys(body), ['error']);
    assert.match(body.error, message);
  }
}

const uniqueSlug = (stem: string) => `${stem}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

before(assertBuildIsFresh);

test('barge serve runs with a bounded heap as installed and through npm start', () => {
  // The installed bin runs through its #! line; npm start runs the bin itself, not `node <file>`.
  assert.ok(
    nodeFlagsOf(MAIN).some((flag) => /^--max-old-space-size=\d+$/.test(flag)),
    'a heap limit on the #! line',
  );
  assert.ok(statSync(MAIN).mode & 0o100, `${MAIN} is executable`);
  const scripts = (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  assert.equal(scripts.start, 'dist/src/cli/main.js serve');
});

for (const backend of await backends({ childProcesses: true })) {
  describe(`barge CLI on ${backend.name}`, () => {
    const h = harness(backend);
    const cli = (...args: string[]) => barge(h.db.url, ...args);

    const projectRow = (slug: string) =>
      h.db.database.write.selectFrom('projects').selectAll().where('slug', '=', slug).executeTakeFirst();
    const keyRows = (projectId: string) =>
      h.db.database.write.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).execute();

    test('project set-storage-budget sets, resets and refuses; the API applies it at once', async () => {
      const slug = uniqueSlug('budget');
      ok(await cli('project', 'create', slug, '--json'));
      const { key } = oneJsonObject(ok(await cli('key', 'create', slug, '--name', 'b', '--json')));
      const set = oneJsonObject(ok(await cli('project', 'set-storage-budget', slug, '--daily-bytes', '1', '--json')));
      assert.deepEqual([set.daily_byte_budget, set.held_byte_budget], [1, null]);
      const refusedLoad = await h.app.request('POST', '/cargo/load', { key, body: mockBody('too big for 1 byte') });
      assert.equal(refusedLoad.status, 429, refusedLoad.text);
      const reset = await cli('project', 'set-storage-budget', slug, '--daily-bytes', 'default');
      assert.match(ok(reset).stdout, /the default per day, the default held/);
      const bad = await cli('project', 'set-storage-budget', slug, '--held-bytes', '-5');
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /invalid byte budget '-5'/);
    });

    test('project set-models and set-budget set, reset and refuse; the API applies them; usage shows the budgets', async () => {
      const slug = uniqueSlug('policy');
      ok(await cli('project', 'create', slug, '--json'));
      const { key } = oneJsonObject(ok(await cli('key', 'create', slug, '--name', 'p', '--json')));
      const models = oneJsonObject(
        ok(await cli('project', 'set-models', slug, '--allow', 'claude-*,gpt-4o', '--json')),
      );
      assert.deepEqual(models.allowed_models, ['claude-*', 'gpt-4o']);
      const refused = await h.app.request('POST', '/cargo/load', { key, body: mockBody('not on the list') });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.detail.error, 'model_not_allowed');
      assert.match(ok(await cli('project', 'set-models', slug, '--all')).stdout, /may use every model/);
      assert.equal((await h.app.request('POST', '/cargo/load', { key, body: mockBody('any model') })).status, 200);
      failed(
        await cli('project', 'set-models', slug, '--allow', 'bad pattern', '--json'),
        /invalid allow 'bad pattern'/,
      );
      failed(await cli('project', 'set-models', slug, '--json'), /give --allow <patterns> or --all/);

      const budget = oneJsonObject(
        ok(await cli('project', 'set-budget', slug, '--monthly-usd', '25', '--daily-usd', '2.5', '--json')),
      );
      assert.deepEqual(budget.spend_budget, { monthly_usd: 25, daily_usd: 2.5 });
      const usage = oneJsonObject(ok(await cli('usage', slug, '--json')));
      assert.deepEqual(
        usage.budgets.map((b: any) => [b.period, b.budget_usd, b.spent_usd, b.reserved_usd]),
        [
          ['month', 25, 0, 0],
          ['day', 2.5, 0, 0],
        ],
      );
      assert.match(
        ok(await cli('usage', slug)).stdout,
        /^Budget this month \(UTC, from \d{4}-\d{2}-01\): \$0\.000000 spent \+ \$0\.000000 reserved of \$25$/m,
      );
      assert.equal(
        oneJsonObject(ok(await cli('project', 'set-budget', slug, '--none', '--json'))).spend_budget,
        'none',
      );
      assert.match(ok(await cli('project', 'set-budget', slug, '--default')).stdout, /Spend budget of .*: the default/);
      assert.match(ok(await cli('usage', slug)).stdout, /^Spend budget: none$/m);
      failed(await cli('project', 'set-budget', slug, '--monthly-usd', '-3', '--json'), /invalid --monthly-usd '-3'/);
      failed(await cli('project', 'set-budget', slug, '--none', '--default', '--json'), /give one of --monthly-usd/);
      failed(await cli('project', 'set-budget', 'no-such-project', '--none', '--json'), /no project 'no-such-project'/);
    });

    test('project create, list, deactivate and activate', async () => {
      const slug = uniqueSlug('acme');
      const created = oneJsonObject(ok(await cli('project', 'create', slug, '--json')));
      for (const field of ['id', 'slug', 'is_active', 'created_at', 'updated_at']) assert.ok(field in created, field);
      assert.match(created.id, /^prj_[0-9a-z]{26}$/);
      assert.equal(created.slug, slug);
      assert.equal(created.is_active, true);
      assert.match(created.created_at, ISO);
      assert.equal((await projectRow(slug))?.id, created.id);

      const [listJson, listText, keyRun] = await Promise.all([
        cli('project', 'list', '--json'),
        cli('project', 'list'),
        cli('key', 'create', slug, '--name', 'ci', '--json'),
      ]);
      const listed = oneJsonObject(ok(listJson));
      assert.deepEqual(Object.keys(listed), ['projects']);
      const entry = listed.projects.find((p: { slug: string }) => p.slug === slug);
      assert.deepEqual(
        { id: entry.id, is_active: entry.is_active, created_at: entry.created_at },
        { id: created.id, is_active: true, created_at: created.created_at },
      );
      assert.match(ok(listText).stdout, new RegExp(`^${slug}\\s+${created.id}\\s+yes`, 'm'));

      // A key of the project answers 403 while it is deactivated, and works again after.
      const { key } = oneJsonObject(ok(keyRun));
      const deactivated = oneJsonObject(ok(await cli('project', 'deactivate', slug, '--json')));
      assert.equal(deactivated.is_active, false);
      assert.equal(deactivated.id, created.id);
      assert.equal((await projectRow(slug))?.is_active, 0);
      assertDetail(
        await h.app.request('POST', '/cargo/load', { key, body: mockBody('hi') }),
        403,
        'Project is inactive.',
      );

      const activated = ok(await cli('project', 'activate', slug));
      assert.match(activated.stdout, new RegExp(`${slug} is now active`));
      assert.equal((await projectRow(slug))?.is_active, 1);
      assert.equal((await h.app.request('POST', '/cargo/load', { key, body: mockBody('hi') })).status, 200);
    });

    test('usage prints the report GET /usage answers, as JSON and as a table; --from and --to choose the days', async () => {
      const { worker } = await h.worker({ latencyMs: 0, settings: { batchMaxWaitMs: 0 } });
      const { slug, key } = await createProjectWithKey(h.db.database);
      const loaded = await h.app.request('POST', '/cargo/load', { key, body: mockBody('usage from the command line') });
      assert.equal(loaded.status, 200, loaded.text);
      await waitFor(
        'the result',
        async () => {
          await worker.runUntilIdle();
          return (await h.app.request('GET', `/cargo/${loaded.body.cargo_id}/result`, { key })).status;
        },
        (status) => status === 200,
        { timeoutMs: 10_000, intervalMs: 50 },
      );
      const api = await h.app.request('GET', '/usage', { key });
      assert.equal(api.status, 200, api.text);
      const [row] = api.body.data;
      assert.equal(row.model, 'svc-mock');
      assert.ok(row.input_tokens > 0 && row.output_tokens > 0);

      const [json, text, old] = await Promise.all([
        cli('usage', slug, '--json'),
        cli('usage', slug),
        cli('usage', slug, '--from', '2020-01-01', '--to', '2020-01-31', '--json'),
      ]);
      assert.deepEqual(oneJsonObject(ok(json)), api.body);
      // Then cache writes and reads (none for a plain svc-mock cargo), cost and standard cost.
      const tokens = (n: number) => n.toLocaleString('en-US');
      const cells = `${row.date}\\s+svc-mock\\s+1\\s+1\\s+${tokens(row.input_tokens)}\\s+${tokens(row.output_tokens)}\\s+0\\s+0\\s+\\$0\\.000000\\s+\\$0\\.000000`;
      assert.match(ok(text).stdout, new RegExp(`^${cells}$`, 'm'));
      assert.match(text.stdout, /^total\s+1\s+1\s/m);
      assert.deepEqual(oneJsonObject(ok(old)).data, []);

      const [badDay, backwards, unknown] = await Promise.all([
        cli('usage', slug, '--from', '2026-13-01', '--json'),
        cli('usage', slug, '--from', '2026-02-02', '--to', '2026-02-01', '--json'),
        cli('usage', 'no-such-project', '--json'),
      ]);
      failed(badDay, /invalid --from '2026-13-01': use a UTC day as YYYY-MM-DD/);
      failed(backwards, /invalid --from '2026-02-02': is after to \(2026-02-01\)/);
      failed(unknown, /no project 'no-such-project'/);
    });

    test('project create: a duplicate slug fails with a clear message and changes nothing', async () => {
      const { slug, projectId } = await createProjectWithKey(h.db.database);
      const [json, text] = await Promise.all([
        cli('project', 'create', slug, '--json'),
        cli('project', 'create', slug),
      ]);
      failed(json, new RegExp(`project '${slug}' already exists`));
      failed(text, /already exists/, false);
      assert.equal(text.stdout, '');
      assert.equal((await projectRow(slug))?.id, projectId);
    });

    test('an unknown slug fails on every command that takes one', async () => {
      const runs = await Promise.all([
        cli('project', 'deactivate', 'no-such-project', '--json'),
        cli('key', 'create', 'no-such-project', '--name', 'x', '--json'),
        cli('key', 'list', 'no-such-project', '--json'),
      ]);
      for (const run of runs) failed(run, /no project 'no-such-project'/);
      assert.equal(await projectRow('no-such-project'), undefined);
    });

    test('key create --json prints exactly {id, key, key_prefix, name, project, expires_at, created_at}', async () => {
      const { slug, projectId } = await createProjectWithKey(h.db.database);
      const [plain, expiring, text] = await Promise.all([
        cli('key', 'create', slug, '--name', 'ci runner', '--json'),
        cli('key', 'create', slug, '--name', 'temp', '--expires-at', '2099-01-31T00:00:00Z', '--json'),
        cli('key', 'create', slug, '--name', 'human'),
      ]);
      const created = oneJsonObject(ok(plain));
      assert.deepEqual(Object.keys(created), [
        'id',
        'key',
        'key_prefix',
        'name',
        'project',
        'expires_at',
        'created_at',
      ]);
      assert.match(created.id, /^key_[0-9a-z]{26}$/);
      assert.match(created.key, new RegExp(`^${KEY.source}$`));
      assert.equal(created.key_prefix, created.key.slice(0, 12));
      assert.equal(created.name, 'ci runner');
      assert.equal(created.project, slug);
      assert.equal(created.expires_at, null);
      assert.match(created.created_at, ISO);
      const temp = oneJsonObject(ok(expiring));
      assert.equal(temp.expires_at, '2099-01-31T00:00:00.000Z');
      assert.equal(ok(text).stdout.match(new RegExp(KEY.source, 'g'))?.length, 1, 'the key is printed once');

      // Stored as a hash with its prefix; the key itself works against the API over the same database.
      const row = (await keyRows(projectId)).find((k) => k.id === created.id);
      assert.equal(row?.key_prefix, created.key_prefix);
      assert.notEqual(row?.key_hash, created.key);
      assert.equal(row?.expires_at, null);
      assert.equal((await keyRows(projectId)).find((k) => k.id === temp.id)?.expires_at, Date.UTC(2099, 0, 31));
      const res = await h.app.request('POST', '/cargo/load', { key: created.key, body: mockBody('hi') });
      assert.equal(res.status, 200, res.text);
    });

    test('key list never prints a full key', async () => {
      const { slug, key: firstKey, projectId } = await createProjectWithKey(h.db.database);
      const { key: secondKey } = await createApiKey(h.db.database, {
        projectId,
        name: 'second',
        expiresAt: Date.UTC(2099, 0, 1),
        now: Date.now(),
      });
      await h.app.request('GET', '/cargo/crg_01jd5q3k8m9x2v4w6y8z0a1b2c/tracking', { key: firstKey });
      const [json, text] = await Promise.all([cli('key', 'list', slug, '--json'), cli('key', 'list', slug)]);
      for (const run of [ok(json), ok(text)]) {
        assert.doesNotMatch(run.stdout, KEY);
        for (const k of [firstKey, secondKey]) {
          assert.ok(!run.stdout.includes(k.slice(12)), 'not even the secret part');
          assert.ok(run.stdout.includes(k.slice(0, 12)), 'the prefix identifies it');
        }
      }
      const listed = oneJsonObject(json);
      assert.equal(listed.keys.length, 2);
      for (const entry of listed.keys) {
        assert.deepEqual(Object.keys(entry).sort(), [
          'created_at',
          'expires_at',
          'id',
          'is_active',
          'key_prefix',
          'last_used_at',
          'name',
          'project',
        ]);
        assert.equal(entry.project, slug);
        assert.equal(entry.is_active, true);
      }
      assert.equal(listed.keys[1].expires_at, '2099-01-01T00:00:00.000Z');
    });

    test('key deactivate: the key then gets 401 from the API', async () => {
      const { key, keyId } = await createProjectWithKey(h.db.database);
      assert.equal((await h.app.request('POST', '/cargo/load', { key, body: mockBody('hi') })).status, 200);
      const [deactivateRun, unknownRun] = await Promise.all([
        cli('key', 'deactivate', keyId, '--json'),
        cli('key', 'deactivate', 'key_01jd5q3k8m9x2v4w6y8z0a1b2c', '--json'),
      ]);
      assert.deepEqual(oneJsonObject(ok(deactivateRun)), { id: keyId, is_active: false });
      assertDetail(await h.app.request('POST', '/cargo/load', { key, body: mockBody('hi') }), 401, 'Invalid API key.');
      failed(unknownRun, /no key/);
    });

    test('admin-token create, list and revoke: --json prints one object, the token once, only its hash stored; the admin API follows', async () => {
      const { slug } = await createProjectWithKey(h.db.database);
      const [all, limited, text] = await Promise.all([
        cli('admin-token', 'create', '--name', 'ops', '--json'),
        cli('admin-token', 'create', '--name', 'acme owner', '--project', slug, '--json'),
        cli('admin-token', 'create', '--name', 'human'),
      ]);
      const created = oneJsonObject(ok(all));
      assert.deepEqual(Object.keys(created), [
        'id',
        'name',
        'token_prefix',
        'project',
        'is_revoked',
        'revoked_at',
        'last_used_at',
        'created_at',
        'token',
      ]);
      assert.match(created.id, /^adt_[0-9a-z]{26}$/);
      assert.match(created.token, ADMIN_TOKEN);
      assert.equal(created.token_prefix, created.token.slice(0, 12));
      assert.equal(created.project, null);
      assert.equal(created.is_revoked, false);
      assert.match(created.created_at, ISO);
      const scoped = oneJsonObject(ok(limited));
      assert.equal(scoped.project, slug);
      assert.match(ok(text).stdout, /shown only once/);
      const shownOnce = ok(text).stdout.match(/barge_at_[A-Za-z0-9]{32}/)?.[0];
      assert.ok(shownOnce);

      // Only SHA-256 hashes in the database: no column holds a token.
      const rows = await h.db.database.write.selectFrom('admin_tokens').selectAll().execute();
      for (const token of [created.token, scoped.token, shownOnce]) {
        const row = rows.find((r) => r.token_hash === createHash('sha256').update(token).digest('hex'));
        assert.ok(row, 'the hash is stored');
        assert.ok(!JSON.stringify(rows).includes(token), 'the token itself is not');
      }

      const listed = ok(await cli('admin-token', 'list', '--json'));
      const list = oneJsonObject(listed).admin_tokens;
      for (const token of [created.token, scoped.token, shownOnce]) assert.ok(!listed.stdout.includes(token));
      const entry = list.find((t: { id: string }) => t.id === scoped.id);
      assert.equal(entry.project, slug);
      assert.equal(entry.token, undefined);
      const table = ok(await cli('admin-token', 'list'));
      assert.match(table.stdout, new RegExp(scoped.id));
      assert.ok(!table.stdout.includes(scoped.token));

      // The tokens work against the admin API; a revoked one is refused on the next request.
      const projects = (token: string) =>
        h.app.request('GET', '/admin/v1/projects', { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await projects(created.token)).status, 200);
      assert.deepEqual(
        (await projects(scoped.token)).body.data.map((p: { slug: string }) => p.slug),
        [slug],
      );
      const revoked = oneJsonObject(ok(await cli('admin-token', 'revoke', scoped.id, '--json')));
      assert.equal(revoked.id, scoped.id);
      assert.equal(revoked.is_revoked, true);
      assert.match(revoked.revoked_at, ISO);
      assert.equal((await projects(scoped.token)).status, 401);
      assert.equal((await projects(created.token)).status, 200);
      const again = oneJsonObject(ok(await cli('admin-token', 'list', '--json'))).admin_tokens;
      assert.equal(again.find((t: { id: string }) => t.id === scoped.id).is_revoked, true);

      failed(await cli('admin-token', 'revoke', 'adt_none', '--json'), /no admin token 'adt_none'/);
      failed(
        await cli('admin-token', 'create', '--name', 'x', '--project', 'no-such', '--json'),
        /no project 'no-such'/,
      );
      failed(await cli('admin-token', 'create', '--name', ' ', '--json'), /--name must not be empty/);
    });

    test('migrate --json applies the migrations once on a fresh database', async () => {
      const fresh = await emptyDatabase(backend.name);
      try {
        const first = oneJsonObject(ok(await barge(fresh.url, 'migrate', '--json')));
        assert.deepEqual(Object.keys(first), ['applied']);
        assert.ok(first.applied.length >= 1);
        assert.equal(first.applied[0], '001_initial');
        const [again, text] = await Promise.all([barge(fresh.url, 'migrate', '--json'), barge(fresh.url, 'migrate')]);
        assert.deepEqual(oneJsonObject(ok(again)), { applied: [] });
        assert.match(ok(text).stdout, /up to date/);
      } finally {
        await fresh.drop();
      }
    });
  });
}

describe('barge CLI input checks', () => {
  // These fail before the database matters, so one backend covers them.
  let dir: string;
  let url: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'barge-cli-'));
    url = `sqlite:${join(dir, 'checks.sqlite')}`;
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('bad slugs, bad --expires-at, an empty or missing --name, and a bad configuration fail', async () => {
    const slug = 'checks';
    ok(await barge(url, 'project', 'create', slug));
    const [upper, leading, long, tomorrow, february30, past, blankName, noName, badConfig] = await Promise.all([
      barge(url, 'project', 'create', 'Upper_Case', '--json'),
      // `--` so that '-leading' is taken as the slug, not as an option.
      barge(url, 'project', 'create', '--json', '--', '-leading'),
      barge(url, 'project', 'create', 'x'.repeat(64), '--json'),
      barge(url, 'key', 'create', slug, '--name', 'x', '--expires-at', 'tomorrow', '--json'),
      barge(url, 'key', 'create', slug, '--name', 'x', '--expires-at', '2027-02-30', '--json'),
      barge(url, 'key', 'create', slug, '--name', 'x', '--expires-at', '2000-01-01T00:00:00Z', '--json'),
      barge(url, 'key', 'create', slug, '--name', '  ', '--json'),
      barge(url, 'key', 'create', slug),
      barge('mysql://localhost/barge', 'project', 'list', '--json'),
    ]);
    for (const run of [upper, leading, long]) failed(run as Run, /invalid slug/);
    for (const run of [tomorrow, february30, past]) failed(run as Run, /invalid --expires-at/);
    failed(blankName as Run, /--name/);
    // A usage error: commander's message and the command's help on stderr, exit code 2.
    assert.equal((noName as Run).code, 2);
    assert.match((noName as Run).stderr, /required option '--name <name>' not specified[\s\S]*Usage: barge key create/);
    assert.equal((noName as Run).stdout, '');
    failed(badConfig as Run, /BARGE_DATABASE_URL/);

    const state = oneJsonObject(ok(await barge(url, 'key', 'list', slug, '--json')));
    assert.deepEqual(state.keys, [], 'no key was created by a failed command');
    const projects = oneJsonObject(ok(await barge(url, 'project', 'list', '--json'))).projects;
    assert.deepEqual(
      projects.map((p: { slug: string }) => p.slug),
      [slug],
    );
    // The longest valid slug is accepted.
    ok(await barge(url, 'project', 'create', 'a'.repeat(63)));
  });

  test('a usage error under --json prints one JSON object with the message and the usage, and exits 2', async () => {
    const [noName, unknownCommand, unknownOption, noSubcommand, badRole] = await Promise.all([
      barge(url, 'key', 'create', 'checks', '--json'),
      barge(url, 'bogus', '--json'),
      barge(url, 'project', 'list', '--json', '--bogus'),
      barge(url, 'key', '--json'),
      barge(url, 'serve', '--role', 'everything', '--json'),
    ]);
    const usageError = (run: Run, message: string, usage: string) => {
      assert.equal(run.code, 2, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
      assert.deepEqual(oneJsonObject(run), { error: message, usage });
      assert.ok(run.stderr.includes(message), run.stderr);
    };
    usageError(noName, "required option '--name <name>' not specified", 'barge key create [options] <slug>');
    usageError(unknownCommand, "unknown command 'bogus'", 'barge [options] [command]');
    usageError(unknownOption, "unknown option '--bogus'", 'barge project list [options]');
    usageError(
      badRole,
      "option '--role <role>' argument 'everything' is invalid. must be all, api or worker",
      'barge serve [options]',
    );
    // `barge key` alone: commander shows the group's help (and says nothing else).
    assert.equal(noSubcommand.code, 2);
    assert.deepEqual(Object.keys(oneJsonObject(noSubcommand)), ['error', 'usage']);
    // --help is no error: text, exit 0.
    const help = await barge(url, 'key', 'create', '--help', '--json');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: barge key create/);
  });
});

describe('barge serve, development first start', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'barge-serve-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('an empty SQLite file gets a default project, a key and its signing secret, kept in a 0600 file, that work; SIGTERM exits 0', async () => {
    const url = `sqlite:${join(dir, 'first.sqlite')}`;
    const first = await serve(url, []);
    const keyFile = join(dir, 'first-start-key.txt');
    try {
      // No terminal is watching: the key goes to a file only its owner may read, never to the logs.
      for (const secret of [KEY, WEBHOOK_SECRET]) {
        assert.doesNotMatch(first.stdout(), secret);
        assert.doesNotMatch(first.stderr(), secret);
      }
      // The log (stdout, JSON without a terminal) says where they went.
      await waitFor(
        'the log line naming the file',
        () => logLines(first.stdout()),
        (lines) =>
          lines.some(
            (l) =>
              /API key, webhook signing secret and an admin token are in the file/.test(l.msg) && l.path === keyFile,
          ),
        { timeoutMs: 5000 },
      );
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      const key = readFileSync(keyFile, 'utf8').match(KEY)?.[0];
      assert.ok(key, 'the file holds the key');
      // The secret the project's webhooks are signed with (stored as is without BARGE_SECRET_KEY).
      const secret = readFileSync(keyFile, 'utf8').match(WEBHOOK_SECRET)?.[0];
      assert.ok(secret, 'the file holds the webhook signing secret');
      assert.equal(await storedWebhookSecret(url, 'default'), secret);
      const res = await fetch(`${first.url}/cargo/load`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(mockBody('hi')),
      });
      assert.equal(res.status, 200, await res.text());
      // The all-projects admin token, in the file only.
      const adminToken = readFileSync(keyFile, 'utf8').match(/barge_at_[A-Za-z0-9]{32}/)?.[0];
      assert.ok(adminToken, 'the file holds an admin token');
      assert.ok(!first.stdout().includes(adminToken) && !first.stderr().includes(adminToken));
      const admin = await fetch(`${first.url}/admin/v1/projects`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      assert.equal(admin.status, 200);
      assert.deepEqual(
        ((await admin.json()) as { data: { slug: string }[] }).data.map((p) => p.slug),
        ['default'],
      );
      // The text points at the dashboard, which the same token signs in to.
      assert.match(
        readFileSync(keyFile, 'utf8'),
        /Next: open the dashboard, http:\/\/localhost:\d+\/dashboard, and sign in/,
      );
      const page = await fetch(`${first.url}/dashboard`);
      assert.equal(page.status, 200);
      const signIn = await fetch(`${first.url}/admin/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: first.url, 'sec-fetch-site': 'same-origin' },
        body: JSON.stringify({ token: adminToken }),
      });
      assert.equal(signIn.status, 201, await signIn.text());
      assert.match(signIn.headers.getSetCookie()[0] ?? '', /^barge_session=/);
    } finally {
      assert.equal(await stop(first.child), 0, first.stderr());
    }

    // Only the first start creates and prints one.
    const second = await serve(url, []);
    try {
      assert.doesNotMatch(second.stdout(), KEY);
    } finally {
      assert.equal(await stop(second.child), 0);
    }
    const projects = oneJsonObject(ok(await barge(url, 'project', 'list', '--json'))).projects;
    assert.deepEqual(
      projects.map((p: { slug: string }) => p.slug),
      ['default'],
    );
  });

  test('serve --json prints one JSON object on stdout, logs on stderr, and the first-start key in neither', async () => {
    const jsonDir = mkdtempSync(join(tmpdir(), 'barge-serve-json-'));
    // At info, fastify logs where it listens and barge that it shuts down: both on stderr.
    const started = await serve(`sqlite:${join(jsonDir, 'json.sqlite')}`, ['--json'], { BARGE_LOG_LEVEL: 'info' });
    try {
      assert.doesNotMatch(started.stderr(), KEY);
      assert.match(readFileSync(join(jsonDir, 'first-start-key.txt'), 'utf8'), KEY);
    } finally {
      assert.equal(await stop(started.child), 0);
      rmSync(jsonDir, { recursive: true, force: true });
    }
    assert.deepEqual(oneJsonObject({ code: 0, stdout: started.stdout(), stderr: '' }), {
      role: 'all',
      url: started.url,
    });
    const logs = started
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line).msg);
    assert.ok(logs.includes(`Server listening at ${started.url}`), started.stderr());
    assert.ok(logs.includes('shutting down'), started.stderr());
  });
});

describe('barge serve, production start', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'barge-serve-production-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('with no project it prints on stderr the commands that make one and a key; once one exists, nothing', async () => {
    const url = `sqlite:${join(dir, 'production.sqlite')}`;
    const hint = (text: string) =>
      logLines(text).some(
        (l) =>
          /^no project yet/.test(l.msg) &&
          JSON.stringify(l.commands) ===
            JSON.stringify(['npx barge project create <slug>', 'npx barge key create <slug> --name <name>']),
      );
    const empty = await serve(url, ['--json'], { BARGE_ENV: 'production' });
    try {
      // Under --json, stderr is the log: the hint is one JSON line of it, naming both commands.
      await waitFor('the hint', empty.stderr, hint, { timeoutMs: 5000 });
    } finally {
      assert.equal(await stop(empty.child), 0, empty.stderr());
    }
    assert.deepEqual(oneJsonObject({ code: 0, stdout: empty.stdout(), stderr: '' }), { role: 'all', url: empty.url });
    // Production makes no project and no key of its own.
    assert.deepEqual(oneJsonObject(ok(await barge(url, 'project', 'list', '--json'))).projects, []);
    assert.equal(existsSync(join(dir, 'first-start-key.txt')), false);

    ok(await barge(url, 'project', 'create', 'acme'));
    const next = await serve(url, [], { BARGE_ENV: 'production' });
    assert.equal(await stop(next.child), 0, next.stderr());
    assert.doesNotMatch(next.stderr(), /no project/);
  });
});

/** The JSON log lines of a process's output (other lines left out). */
function logLines(text: string): { msg: string; [field: string]: unknown }[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string });
}

/** The signing secret stored for a project of a SQLite file. */
async function storedWebhookSecret(databaseUrl: string, slug: string): Promise<string | null | undefined> {
  const database = openDatabase(databaseUrl, { writeThread: false });
  try {
    const row = await database.read
      .selectFrom('projects')
      .select('webhook_secret')
      .where('slug', '=', slug)
      .executeTakeFirst();
    return row?.webhook_secret;
  } finally {
    await database.close();
  }
}

/** Starts `barge serve --port 0` and waits until it says where it listens. */
async function serve(
  databaseUrl: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string; stdout: () => string; stderr: () => string }> {
  const child = killAtExit(
    spawn(process.execPath, [MAIN, 'serve', '--port', '0', ...args], {
      env: childEnv(databaseUrl, { HOST: '127.0.0.1', BARGE_ENV: 'development', BARGE_LOG_LEVEL: 'warn', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within 15 s\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 15_000);
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      const found = stdout.match(/listening on (http:\/\/[^\s"]+)/) ?? stdout.match(/"url":"(http:\/\/[^"]+)"/);
      if (found) {
        clearTimeout(timer);
        resolve(found[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
  return { child, url, stdout: () => stdout, stderr: () => stderr };
}

/** SIGTERM, then the exit code (or the signal that ended the process instead). */
function stop(child: ChildProcess): Promise<number | string | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(child.exitCode ?? child.signalCode);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
    child.kill('SIGTERM');
  });
}

/** A database with no tables at all, for `barge migrate`. */
async function emptyDatabase(kind: Backend['name']): Promise<{ url: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'barge-migrate-'));
    return {
      url: `sqlite:${join(dir, 'fresh.sqlite')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `barge_cli_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const cleanup = new pg.Client({ connectionString: PG_URL });
      await cleanup.connect();
      await cleanup.query(`drop schema if exists ${schema} cascade`);
      await cleanup.end();
    },
  };
}
