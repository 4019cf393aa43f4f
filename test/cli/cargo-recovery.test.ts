/**
 * `barge cargo redeliver --project <slug> --status callback_failed --since <time> [--until] [--dry-run]`
 * as a child process on a SQLite file and PostgreSQL: the dry-run count, the recovery worked
 * through to its end by the command (each cargo redelivered once), its refusals; and no file of
 * src/cli/ imports src/store/ (the CLI goes through src/operations/).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../src/domain/clock.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { type CliRun, runBarge } from '../helpers/cli.js';
import { failedCargo } from '../helpers/failed-deliveries.js';
import { assertBuildIsFresh } from '../helpers/serve.js';

const iso = (ms: number) => new Date(ms).toISOString();

function json(run: CliRun): any {
  const lines = run.stdout.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one JSON line, got: ${run.stdout}\nstderr: ${run.stderr}`);
  return JSON.parse(lines[0] as string);
}

for (const backend of await backends({ childProcesses: true })) {
  describe(`barge cargo redeliver --project on ${backend.name}`, () => {
    let db: TestDatabase;
    before(async () => {
      assertBuildIsFresh();
      db = await backend.create();
    });
    after(() => db.drop());
    const barge = (...args: string[]) => runBarge(db.url, args);

    test('--dry-run counts; without it the command makes the recovery and works it through: each cargo redelivered once', async () => {
      const { slug, projectId } = await createProjectWithKey(db.database);
      const t0 = Date.now() - 120_000;
      const ids = await failedCargo(db.database, systemClock, projectId, [
        { at: t0, count: 40 },
        { at: t0 + 60_000, count: 30 },
      ]);
      const window = ['--project', slug, '--status', 'callback_failed', '--since', iso(t0)];

      const counted = await barge('cargo', 'redeliver', ...window, '--until', iso(t0 + 30_000), '--dry-run', '--json');
      assert.equal(counted.code, 0, counted.stderr);
      assert.deepEqual(json(counted), {
        project: slug,
        status: 'callback_failed',
        since: iso(t0),
        until: iso(t0 + 30_000),
        count: 40,
      });
      const run = await barge('cargo', 'redeliver', ...window, '--json');
      assert.equal(run.code, 0, run.stderr);
      const recovery = json(run);
      assert.match(recovery.id, /^rcv_/);
      assert.deepEqual(
        [
          recovery.project,
          recovery.state,
          recovery.status,
          recovery.since,
          recovery.total,
          recovery.done,
          recovery.redelivered,
        ],
        [slug, 'completed', 'callback_failed', iso(t0), 70, 70, 70],
      );
      const deliveries = await db.database.read
        .selectFrom('deliveries')
        .select('cargo_id')
        .where('trigger', '=', 'recovery')
        .execute();
      assert.deepEqual(deliveries.map((d) => d.cargo_id).sort(), [...ids].sort());
      const statuses = await db.database.read
        .selectFrom('cargo')
        .select('status')
        .distinct()
        .where('project_id', '=', projectId)
        .execute();
      assert.deepEqual(statuses, [{ status: 'callback_pending' }]);

      // Nothing is left in the status: the next recovery is empty, completed at once.
      const empty = await barge('cargo', 'redeliver', ...window);
      assert.equal(empty.code, 0, empty.stderr);
      assert.match(empty.stdout, /^Recovery rcv_\w+ completed: 0 of 0 callback_failed cargo of .+ redelivered/);
    });

    test('refusals of the recovery asked for: exit 1 with the message, naming the flag', async () => {
      const { slug } = await createProjectWithKey(db.database);
      const run = await barge('cargo', 'redeliver', '--project', slug, '--since', 'yesterday', '--json');
      assert.equal(run.code, 1, run.stderr);
      assert.match(json(run).error, /^invalid --since 'yesterday': use an ISO 8601 date or date-time/);
      const unknown = await barge(
        'cargo',
        'redeliver',
        '--project',
        'no-such-project',
        '--since',
        '2026-01-01',
        '--json',
      );
      assert.equal(unknown.code, 1);
      assert.equal(json(unknown).error, "no project 'no-such-project'");
    });
  });
}

test('a command line that asks for both a cargo and a recovery, or neither, is a usage error (exit 2)', async () => {
  // Refused before any database is opened: one that cannot be opened shows it.
  for (const args of [
    ['cargo', 'redeliver'],
    ['cargo', 'redeliver', 'crg_00000000000000000000000000', '--project', 'p', '--since', '2026-01-01'],
  ]) {
    const run = await runBarge('sqlite:/nonexistent/dir/barge.sqlite', [...args, '--json']);
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
    assert.match(json(run).error, /give a cargo id, or --project/);
  }
});

test('no file of src/cli/ imports src/store/: the CLI goes through src/operations/', () => {
  const dir = fileURLToPath(new URL('../../src/cli/', import.meta.url));
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join(dir, file), 'utf8');
    assert.doesNotMatch(source, /from '\.\.\/store\//, file);
  }
});
