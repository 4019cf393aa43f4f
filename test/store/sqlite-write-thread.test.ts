/**
 * The SQLite write connection in a worker thread (src/store/sqlite-write-thread.ts), as Kysely
 * sees it: statements return rows and row counts, transactions are atomic, failures carry
 * SQLite's code, the main connection reads what committed, and closing waits for work in flight.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { newId } from '../../src/domain/ids.js';
import { createProject } from '../../src/store/admin/projects.js';
import { insertCargo, type NewCargo } from '../../src/store/cargo/insert.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';
import { eventually } from '../helpers/wait.js';

const cargoRow = (projectId: string, now: number, id = newId('crg', now)) => pendingCargoRow(projectId, { now, id });

/** The cargo row alone, for statements written straight into the cargo table. */
const cargoOnly = ({ request: _, metadata: __, ...row }: NewCargo) => row;

async function countCargo(database: Database, ids: string[]): Promise<number> {
  const row = await database.read
    .selectFrom('cargo')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', 'in', ids)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('SQLite write thread', () => {
  let dir: string;
  let database: Database;
  let projectId: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'barge-write-thread-'));
    database = openDatabase(`sqlite:${join(dir, 'barge.sqlite')}`);
    await migrate(database);
    const project = await createProject(database, 'write-thread', Date.now());
    assert.notEqual(project, 'slug_taken');
    projectId = project === 'slug_taken' ? '' : project.id;
  });
  after(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('writes go to their own connection; the main connection reads them once they resolve', async () => {
    assert.notEqual(database.write, database.read);
    const rows = Array.from({ length: 2500 }, () => cargoRow(projectId, Date.now()));
    await insertCargo(database, rows);
    assert.equal(
      await countCargo(
        database,
        rows.map((r) => r.id),
      ),
      2500,
    );
  });

  test('statements return rows (RETURNING) and row counts', async () => {
    const rows = [cargoRow(projectId, Date.now()), cargoRow(projectId, Date.now())];
    await insertCargo(database, rows);
    const moved = await database.write
      .updateTable('cargo')
      .set({ status: 'batched' })
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .returning(['id', 'status'])
      .execute();
    assert.deepEqual(moved.map((r) => r.status).sort(), ['batched', 'batched']);
    const result = await database.write
      .updateTable('cargo')
      .set({ status: 'pending' })
      .where('id', '=', rows[0]?.id as string)
      .where('status', '=', 'batched')
      .executeTakeFirst();
    assert.equal(result.numUpdatedRows, 1n);
  });

  test('a transaction with one bad row writes nothing, and the error carries SQLite code', async () => {
    const good = cargoRow(projectId, Date.now());
    const duplicate = cargoRow(projectId, Date.now(), good.id);
    await assert.rejects(
      database.write.transaction().execute(async (tx) => {
        await tx.insertInto('cargo').values(cargoOnly(good)).execute();
        await tx.insertInto('cargo').values(cargoOnly(duplicate)).execute();
      }),
      (err: { code?: string }) => err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    );
    assert.equal(await countCargo(database, [good.id]), 0);
  });

  test('a transaction whose BEGIN cannot take the write lock fails with SQLite code and writes nothing; the next one commits', async () => {
    // BEGIN goes to the thread with the transaction's first statement: when BEGIN fails, that
    // statement must not run outside a transaction, and no ROLLBACK may follow.
    const other = new BetterSqlite3(join(dir, 'barge.sqlite'));
    const blocked = cargoRow(projectId, Date.now());
    try {
      other.prepare('begin immediate').run();
      await assert.rejects(
        database.write.transaction().execute(async (tx) => {
          await tx.insertInto('cargo').values(cargoOnly(blocked)).execute();
        }),
        (err: { code?: string }) => err.code === 'SQLITE_BUSY',
      );
    } finally {
      other.prepare('rollback').run();
      other.close();
    }
    assert.equal(await countCargo(database, [blocked.id]), 0);
    const next = cargoRow(projectId, Date.now());
    await database.write.transaction().execute(async (tx) => {
      await tx.insertInto('cargo').values(cargoOnly(next)).execute();
    });
    await database.write.transaction().execute(async () => {}); // one that runs nothing
    assert.equal(await countCargo(database, [next.id]), 1);
  });

  test('writeAll runs its statements as one transaction: all of them, or none and the error with SQLite code', async () => {
    const [a, b] = [cargoRow(projectId, Date.now()), cargoRow(projectId, Date.now())];
    const insert = (row: NewCargo) => database.write.insertInto('cargo').values(cargoOnly(row)).compile();
    const touch = (row: NewCargo) =>
      database.write.updateTable('cargo').set({ updated_at: 7 }).where('id', '=', row.id).compile();
    // In order: the update finds the row the statement before it inserted.
    await database.writeAll([insert(a), touch(a)]);
    const stored = await database.read
      .selectFrom('cargo')
      .select('updated_at')
      .where('id', '=', a.id)
      .executeTakeFirst();
    assert.equal(stored?.updated_at, 7);
    await assert.rejects(
      database.writeAll([insert(b), insert(a)]),
      (err: { code?: string }) => err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    );
    assert.equal(await countCargo(database, [b.id]), 0);
  });

  test('writeAll and Kysely transactions take turns on the connection', async () => {
    const rows = Array.from({ length: 20 }, () => cargoRow(projectId, Date.now()));
    await Promise.all(
      rows.map((row, i) =>
        i % 2 === 0
          ? database.writeAll([database.write.insertInto('cargo').values(cargoOnly(row)).compile()])
          : database.write.transaction().execute(async (tx) => {
              await tx.insertInto('cargo').values(cargoOnly(row)).execute();
              const seen = await tx.selectFrom('cargo').select('id').where('id', '=', row.id).executeTakeFirst();
              assert.equal(seen?.id, row.id);
            }),
      ),
    );
    assert.equal(
      await countCargo(
        database,
        rows.map((r) => r.id),
      ),
      20,
    );
  });

  test('concurrent transactions take turns: each sees its own reads and writes', async () => {
    const ids = await Promise.all(
      Array.from({ length: 20 }, async () =>
        database.write.transaction().execute(async (tx) => {
          const row = cargoRow(projectId, Date.now());
          await tx.insertInto('cargo').values(cargoOnly(row)).execute();
          const seen = await tx.selectFrom('cargo').select('id').where('id', '=', row.id).executeTakeFirst();
          assert.equal(seen?.id, row.id);
          return row.id;
        }),
      ),
    );
    assert.equal(await countCargo(database, ids), 20);
  });

  test('close waits for the writes in flight', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'barge-write-thread-close-'));
    const url = `sqlite:${join(dir2, 'barge.sqlite')}`;
    const other = openDatabase(url);
    await migrate(other);
    const project = await createProject(other, 'closing', Date.now());
    assert.notEqual(project, 'slug_taken');
    const rows = Array.from({ length: 500 }, () => cargoRow(project === 'slug_taken' ? '' : project.id, Date.now()));
    const writing = insertCargo(other, rows);
    await other.close();
    await writing;
    // After close, a write is refused at once (it must not wait on a lock no one gives back).
    await assert.rejects(insertCargo(other, rows.slice(0, 1)), /closed/);
    const reopened = openDatabase(url);
    assert.equal(
      await countCargo(
        reopened,
        rows.map((r) => r.id),
      ),
      500,
    );
    await reopened.close();
    rmSync(dir2, { recursive: true, force: true });
  });
});

test('the write thread checkpoints the WAL into the database file by itself once writes pause', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'barge-checkpoint-'));
  const path = join(dir, 'barge.sqlite');
  const database = openDatabase(`sqlite:${path}`);
  try {
    await migrate(database);
    const project = await createProject(database, 'checkpoint', Date.now());
    assert.notEqual(project, 'slug_taken');
    const before = statSync(path).size;
    // About 1 MiB in WAL pages, below SQLite's own automatic checkpoint, which the thread turns off.
    for (let i = 0; i < 4; i++) {
      const rows = Array.from({ length: 500 }, () => cargoRow(project === 'slug_taken' ? '' : project.id, Date.now()));
      await insertCargo(database, rows);
    }
    // Only a checkpoint writes pages into the database file itself.
    await eventually(
      async () => statSync(path).size,
      (size) => size > before + 512 * 1024,
      3000,
    );
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a new SQLite database is readable by its owner only: 0600 files in a 0700 directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'barge-modes-'));
  const path = join(dir, 'data', 'barge.sqlite');
  const database = openDatabase(`sqlite:${path}`);
  try {
    await migrate(database);
    assert.equal(statSync(join(dir, 'data')).mode & 0o777, 0o700);
    for (const file of [path, `${path}-wal`]) assert.equal(statSync(file).mode & 0o777, 0o600, file);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
