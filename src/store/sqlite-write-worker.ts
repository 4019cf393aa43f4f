import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';

/** One SQL text and the rows of positional values it runs with. */
export interface Statement {
  sql: string;
  rows: unknown[][];
}

/**
 * better-sqlite3 is synchronous: a commit with synchronous=FULL blocks the thread that runs it for
 * the write and the fsync. On the event loop that stalls every request in flight. This runs the
 * hot batch writes (the group-commit flush of POST /cargo/load) on a second connection in a worker
 * thread, so the event loop keeps parsing and answering while the disk syncs. Durability is
 * unchanged: `run` resolves only after COMMIT has returned, with the same pragmas as the main
 * connection.
 *
 * Two writers on one file need one rule: a deferred transaction on the main connection that has
 * read cannot write once another connection has committed (SQLITE_BUSY_SNAPSHOT, which
 * busy_timeout does not retry), and a bare statement that meets a commit in progress waits in
 * SQLite's busy handler, which blocks the event loop. So the worker's commits and every use of the
 * main connection, statement or transaction, take turns through one in-process lock (`lock`, used
 * by `coordinatedSqliteDialect`), waiting asynchronously.
 *
 * The worker is started on the first write, so CLI commands that never write cargo never pay for it.
 */
export class SqliteWriteWorker {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private nextId = 1;
  private closing: Promise<void> | null = null;
  /** The end of the queue of lock holders: each waits for the one before to release. */
  private lockTail: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly pragmas: readonly string[],
  ) {}

  /**
   * Runs each statement once per row of its `rows` (positional values), all in one IMMEDIATE
   * transaction; resolves after COMMIT, rejects (and nothing is written) if any row fails.
   */
  async run(statements: readonly Statement[]): Promise<void> {
    if (this.closing) throw new Error('database is closed');
    const unlock = await this.lock();
    try {
      await this.post(statements);
    } finally {
      unlock();
    }
  }

  /** Takes the write lock, in arrival order; resolves to the function that releases it. */
  lock(): Promise<() => void> {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const acquired = this.lockTail.then(() => release);
    this.lockTail = this.lockTail.then(() => released);
    return acquired;
  }

  /** Lets the writes already asked for commit, then closes the worker's connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // Every write that started before this waits in the lock queue ahead of us.
      const unlock = await this.lock();
      try {
        const worker = this.worker;
        if (!worker) return;
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.ref();
        worker.postMessage('close');
        await exited;
      } finally {
        unlock();
      }
    })();
    return this.closing;
  }

  private post(statements: readonly Statement[]): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Only work in flight may keep the process alive; an idle worker must not.
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, statements });
    });
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path: this.path,
        pragmas: this.pragmas,
        // Resolved here, so the worker finds the driver wherever barge is installed.
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      },
    });
    worker.unref();
    worker.on('message', (reply: { id: number; error?: string }) => this.settle(reply));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`SQLite write worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private settle(reply: { id: number; error?: string }): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.error === undefined) waiter.resolve();
    else waiter.reject(new Error(reply.error));
  }

  /** The worker is gone: nothing in flight can be known to have committed. The next write restarts it. */
  private fail(err: Error): void {
    this.worker = null;
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }
}

/**
 * The worker, plain CommonJS so it runs the same from dist/ and under tsx (which does not reach
 * worker threads). One prepared statement per SQL text; each message is one transaction.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
for (const pragma of workerData.pragmas) db.pragma(pragma);
const statements = new Map();
const prepared = (sql) => {
  let statement = statements.get(sql);
  if (!statement) {
    // Bounded, in case a caller builds SQL texts without end (an IN list of varying length).
    if (statements.size >= 500) statements.clear();
    statements.set(sql, (statement = db.prepare(sql)));
  }
  return statement;
};
const runAll = db.transaction((batch) => {
  for (const { sql, rows } of batch) {
    const statement = prepared(sql);
    for (const row of rows) statement.run(row);
  }
});
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    runAll.immediate(message.statements);
    parentPort.postMessage({ id: message.id });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: String(err && err.message ? err.message : err) });
  }
});
`;

/**
 * Kysely's SQLite dialect whose transactions hold the write worker's lock from BEGIN to COMMIT or
 * ROLLBACK, so no worker commit lands in the middle of one (see SqliteWriteWorker).
 */
export function coordinatedSqliteDialect(config: SqliteDialectConfig, writer: SqliteWriteWorker): SqliteDialect {
  return new (class extends SqliteDialect {
    override createDriver(): Driver {
      return new LockingDriver(super.createDriver(), writer);
    }
  })(config);
}

/**
 * Holds the write worker's lock from acquiring the main connection to releasing it: Kysely acquires
 * it once per statement, and once for a whole transaction, so both take their turn the same way.
 */
class LockingDriver implements Driver {
  private readonly unlocks = new WeakMap<DatabaseConnection, () => void>();

  constructor(
    private readonly inner: Driver,
    private readonly writer: SqliteWriteWorker,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const unlock = await this.writer.lock();
    try {
      const connection = await this.inner.acquireConnection();
      this.unlocks.set(connection, unlock);
      return connection;
    } catch (err) {
      unlock();
      throw err;
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.savepoint?.(connection, name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.rollbackToSavepoint?.(connection, name, compile);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.releaseSavepoint?.(connection, name, compile);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection(connection);
    } finally {
      this.unlocks.get(connection)?.();
      this.unlocks.delete(connection);
    }
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

const workers = new WeakMap<object, SqliteWriteWorker>();

/** Ties a write worker to the Kysely instance of the same SQLite file (see database.ts). */
export function attachWriteWorker(db: object, worker: SqliteWriteWorker): void {
  workers.set(db, worker);
}

/** The write worker of this SQLite database, or undefined (PostgreSQL, in-memory SQLite). */
export function writeWorkerOf(db: object): SqliteWriteWorker | undefined {
  return workers.get(db);
}

const COLUMN_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * `insert into <table>` statements for rows given as objects, with Kysely's meaning: a key whose
 * value is undefined is left out, so the column takes its default. Rows with the same columns
 * share one statement (normally all of them do).
 */
export function insertStatements(table: string, rows: readonly object[]): Statement[] {
  const byColumns = new Map<string, Statement>();
  for (const row of rows) {
    // One pass over the row (this runs on the event loop, once per submitted cargo).
    const record = row as Record<string, unknown>;
    const columns: string[] = [];
    const values: unknown[] = [];
    for (const column in record) {
      const value = record[column];
      if (value === undefined) continue;
      columns.push(column);
      values.push(value);
    }
    const signature = columns.join(', ');
    let statement = byColumns.get(signature);
    if (!statement) {
      const bad = columns.find((column) => !COLUMN_NAME.test(column));
      if (bad !== undefined) throw new Error(`not a column name: '${bad}'`);
      const sql = `insert into ${table} (${signature}) values (${columns.map(() => '?').join(', ')})`;
      statement = { sql, rows: [] };
      byColumns.set(signature, statement);
    }
    statement.rows.push(values);
  }
  return [...byColumns.values()];
}
