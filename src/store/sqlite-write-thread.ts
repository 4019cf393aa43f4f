/**
 * The write connection of a SQLite file, as a Kysely dialect: every statement runs on a second
 * connection in a worker thread (sqlite-write-thread-worker.cjs), so the write and the fsync of
 * synchronous=FULL never block the event loop. The main connection only reads (WAL readers
 * never wait for the writer), so the two never contend for the write lock; transactions are
 * `BEGIN IMMEDIATE`, and one transaction or statement at a time holds the connection, as with
 * Kysely's own SqliteDriver. A query resolves after the thread ran it; COMMIT after it is durable.
 *
 * The thread starts on the first statement (or watch), so a process that never writes never pays
 * for it.
 */
import { Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type Dialect as KyselyDialect,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

export function writeThreadDialect(path: string, pragmas: readonly string[]): WriteThread {
  const driver = new WriteThreadDriver(path, pragmas);
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => driver,
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    runScript: (queries) => driver.runScript(queries),
    watch: (onChange) => driver.watch(onChange),
  };
}

/** The dialect, and a whole transaction sent to the thread in one message (Database.writeAll). */
export interface WriteThread extends KyselyDialect {
  /** Resolves to the rows each statement returned (none for one that returns none). */
  runScript(queries: readonly CompiledQuery[]): Promise<unknown[][]>;
  /**
   * Calls `onChange` within about 100 ms of a commit by another connection to the file (another
   * process, the CLI), never for this one's own; returns the function that stops it.
   */
  watch(onChange: () => void): () => void;
}

/** After the thread failed, a watch restarts it this much later (not in a tight loop). */
const WATCH_RESTART_MS = 1_000;

type Result = { rows: unknown[] } | { changes: number; lastInsertRowid: number | bigint };

type Reply =
  | ({ id: number } & Result)
  | { id: number; results: unknown[][] }
  | { id: number }
  | { id: number; error: { message: string; code: string | undefined; notBegun?: boolean } };

/** An error the thread reported, with SQLite's code (SQLITE_CONSTRAINT_UNIQUE, ...). */
class SqliteThreadError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqliteError';
  }
}

class WriteThreadDriver implements Driver {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (reply: Reply) => void; reject: (err: Error) => void }>();
  private nextId = 1;
  /** The end of the queue of connection holders: each waits for the one before to release. */
  private lockTail: Promise<void> = Promise.resolve();
  private releases: (() => void)[] = [];
  private readonly connection: DatabaseConnection;
  private closed = false;
  /** Called when another connection committed (watch). */
  private readonly watchers = new Set<() => void>();
  /**
   * `pending`: a transaction has begun in Kysely's eyes and its BEGIN goes with the next
   * statement; `open`: the thread's connection is inside it.
   */
  private transaction: 'none' | 'pending' | 'open' = 'none';

  constructor(
    private readonly path: string,
    private readonly pragmas: readonly string[],
  ) {
    this.connection = {
      executeQuery: <R>(query: CompiledQuery) => this.execute<R>(query),
      streamQuery: () => {
        throw new Error('the SQLite write connection does not stream');
      },
    };
  }

  async init(): Promise<void> {}

  /** One holder at a time, in arrival order. */
  async acquireConnection(): Promise<DatabaseConnection> {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const turn = this.lockTail;
    this.lockTail = turn.then(() => released);
    await turn;
    this.releases.push(release);
    return this.connection;
  }

  async releaseConnection(): Promise<void> {
    this.releases.shift()?.();
  }

  // BEGIN travels with the transaction's first statement: one round trip to the thread less for
  // every transaction, and the write lock is taken when there is something to write. A
  // transaction that runs no statement sends nothing.
  async beginTransaction(): Promise<void> {
    this.transaction = 'pending';
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.transaction === 'open') await connection.executeQuery(CompiledQuery.raw('commit'));
    this.transaction = 'none';
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // Nothing to roll back when no statement ran, or when BEGIN itself failed.
    if (this.transaction === 'open') await connection.executeQuery(CompiledQuery.raw('rollback'));
    this.transaction = 'none';
  }

  /** Lets every statement already asked for finish, then closes the thread's connection. */
  async destroy(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.acquireConnection();
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  /**
   * Runs the statements as one transaction on the thread, sent in one message: BEGIN IMMEDIATE,
   * each statement, COMMIT (ROLLBACK after one that fails, whose error this throws). A transaction
   * made of Kysely calls waits for the event loop's turn after each statement; this waits once.
   * It takes the connection as a transaction does.
   */
  async runScript(queries: readonly CompiledQuery[]): Promise<unknown[][]> {
    if (queries.length === 0) return [];
    // Kysely refuses a query after destroy(); a script bypasses Kysely, and the lock destroy took
    // is never given back.
    if (this.closed) throw new Error('database is closed');
    await this.acquireConnection();
    try {
      const reply = await this.post({ script: queries.map((q) => ({ sql: q.sql, parameters: q.parameters })) });
      if ('error' in reply) throw new SqliteThreadError(reply.error.message, reply.error.code);
      return 'results' in reply ? reply.results : [];
    } finally {
      await this.releaseConnection();
    }
  }

  watch(onChange: () => void): () => void {
    this.watchers.add(onChange);
    if (this.watchers.size === 1 && !this.closed) {
      if (this.worker) this.worker.postMessage('watch');
      else this.start();
    }
    return () => {
      this.watchers.delete(onChange);
      if (this.watchers.size === 0) this.worker?.postMessage('unwatch');
    };
  }

  private async execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const begin = this.transaction === 'pending';
    const reply = await this.post({ sql: query.sql, parameters: query.parameters, begin });
    if (begin) this.transaction = 'error' in reply && reply.error.notBegun ? 'none' : 'open';
    if ('error' in reply) throw new SqliteThreadError(reply.error.message, reply.error.code);
    if ('rows' in reply) return { rows: reply.rows as R[] };
    if (!('changes' in reply)) throw new Error('the SQLite write thread answered a statement as a script');
    return { rows: [], numAffectedRows: BigInt(reply.changes), insertId: BigInt(reply.lastInsertRowid) };
  }

  private post(
    message: { sql: string; parameters: readonly unknown[]; begin: boolean } | { script: unknown[] },
  ): Promise<Reply> {
    if (this.closed && this.worker === null) return Promise.reject(new Error('database is closed'));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Only work in flight may keep the process alive; an idle thread must not.
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, ...message });
    });
  }

  private start(): Worker {
    const worker = new Worker(new URL('./sqlite-write-thread-worker.cjs', import.meta.url), {
      workerData: { path: this.path, pragmas: this.pragmas },
    });
    worker.unref();
    worker.on('message', (message: Reply | { changed: true }) => {
      if ('changed' in message) for (const onChange of this.watchers) onChange();
      else this.settle(message);
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`SQLite write thread exited with code ${code}`)));
    this.worker = worker;
    if (this.watchers.size > 0) worker.postMessage('watch');
    return worker;
  }

  private settle(reply: Reply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    waiter.resolve(reply);
  }

  /**
   * The thread is gone: nothing in flight can be known to have run. The next statement restarts
   * it; a watch restarts it a second later by itself, and its watchers wake once for what
   * committed while nothing watched.
   */
  private fail(err: Error): void {
    this.worker = null;
    this.transaction = 'none';
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
    if (this.closed || this.watchers.size === 0) return;
    setTimeout(() => {
      if (this.closed || this.watchers.size === 0) return;
      if (!this.worker) this.start();
      for (const onChange of this.watchers) onChange();
    }, WATCH_RESTART_MS).unref();
  }
}
