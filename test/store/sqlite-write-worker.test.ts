import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { insertCargo, type NewCargo } from '../../src/store/cargo.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { createProject } from '../../src/store/projects.js';
import { insertStatements, writeWorkerOf } from '../../src/store/sqlite-write-worker.js';

function cargoRow(projectId: string, now: number, id = newId('crg', now)): NewCargo {
  return {
    id,
    project_id: projectId,
    status: 'pending',
    model: 'svc-mock',
    provider: 'mock',
    provider_model: 'svc-mock',
    request: '{"requests":[{"modelInput":{"max_tokens":1024,"messages":[{"role":"user","content":"hi"}]}}]}',
    request_count: 1,
    is_records: 0,
    request_bytes: 87,
    metadata: null,
    result_ttl_seconds: 3600,
    callback_url: null,
    callback: null,
    created_at: now,
    updated_at: now,
  };
}

async function countCargo(database: Database): Promise<number> {
  const row = await database.db
    .selectFrom('cargo')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('SQLite write worker', () => {
  let dir: string;
  let database: Database;
  let projectId: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'barge-write-worker-'));
    database = openDatabase(`sqlite:${join(dir, 'barge.sqlite')}`);
    await migrate(database);
    const project = await createProject(database.db, 'write-worker', Date.now());
    assert.notEqual(project, 'slug_taken');
    projectId = project === 'slug_taken' ? '' : project.id;
  });
  after(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a file database inserts cargo through the worker; the rows are visible once it resolves', async () => {
    assert.ok(writeWorkerOf(database.db));
    const now = Date.now();
    const rows = Array.from({ length: 50 }, () => cargoRow(projectId, now));
    await insertCargo(database.db, rows);
    const stored = await database.db
      .selectFrom('cargo')
      .selectAll()
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    assert.equal(stored.length, 50);
    const first = stored.find((r) => r.id === rows[0]?.id);
    assert.equal(first?.status, 'pending');
    assert.equal(first?.created_at, now);
    assert.equal(first?.metadata, null);
    assert.equal(first?.batch_id, null);
  });

  test('a batch with one bad row writes nothing and rejects', async () => {
    const before = await countCargo(database);
    const now = Date.now();
    const duplicate = newId('crg', now);
    await assert.rejects(
      insertCargo(database.db, [
        cargoRow(projectId, now),
        cargoRow(projectId, now, duplicate),
        cargoRow(projectId, now, duplicate),
      ]),
      /UNIQUE constraint failed/,
    );
    assert.equal(await countCargo(database), before);
    // The worker survives a failed batch.
    await insertCargo(database.db, [cargoRow(projectId, now)]);
    assert.equal(await countCargo(database), before + 1);
  });

  test('a transaction that reads, then writes, is not broken by worker commits in between', async () => {
    const now = Date.now();
    const inserts: Promise<void>[] = [];
    const transactions = Array.from({ length: 20 }, (_, i) =>
      database.db.transaction().execute(async (tx) => {
        const { n } = await tx
          .selectFrom('cargo')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        // Give the worker every chance to commit between this read and the write below.
        inserts.push(insertCargo(database.db, [cargoRow(projectId, now)]));
        await new Promise((resolve) => setTimeout(resolve, 2));
        await tx
          .updateTable('projects')
          .set({ updated_at: now + Number(n) + i })
          .where('id', '=', projectId)
          .execute();
      }),
    );
    await Promise.all([...transactions, ...inserts]);
  });

  test('close waits for the writes in flight', async () => {
    const other = openDatabase(`sqlite:${join(dir, 'barge.sqlite')}`);
    const now = Date.now();
    const rows = Array.from({ length: 10 }, () => cargoRow(projectId, now));
    const writes = rows.map((row) => insertCargo(other.db, [row]));
    await other.close();
    await Promise.all(writes);
    // Exactly these rows, counted by id: other tests' writes to the same file do not matter.
    const stored = await database.db
      .selectFrom('cargo')
      .select('id')
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    assert.equal(stored.length, 10);
  });
});

describe('insertStatements', () => {
  test('leaves undefined values out and groups rows by their columns', () => {
    const statements = insertStatements('t', [{ a: 1, b: undefined }, { a: 2 }, { a: 3, b: null }]);
    assert.deepEqual(statements, [
      { sql: 'insert into t (a) values (?)', rows: [[1], [2]] },
      { sql: 'insert into t (a, b) values (?, ?)', rows: [[3, null]] },
    ]);
  });

  test('refuses a key that is not a plain column name', () => {
    assert.throws(() => insertStatements('t', [{ 'a; drop table t': 1 }]), /not a column name/);
  });
});
