// @ts-check
/**
 * The SQLite write connection's thread (see sqlite-write-thread.ts): runs each compiled query it
 * is sent on its own connection and answers with the rows, or the row count and last rowid, and
 * runs a whole transaction sent as one script; while watched, it says when another connection
 * committed. Kept as CommonJS so the same file runs from src/ under tsx (which does not reach
 * worker threads) and from dist/. One prepared statement per SQL text, in a bounded cache.
 */
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');

/** `begin`: the statement is the first of a transaction, to run after BEGIN IMMEDIATE. */
/** @typedef {{ id: number; sql: string; parameters: unknown[]; begin: boolean }} Query */
/** A whole transaction in one message: its statements, run between BEGIN IMMEDIATE and COMMIT. */
/** @typedef {{ id: number; script: { sql: string; parameters: unknown[] }[] }} Script */
/** @typedef {{ rows: unknown[] } | { changes: number; lastInsertRowid: number | bigint }} Result */
/** @typedef {{ id: number } & Result | { id: number; results: unknown[][] } | { id: number } | { id: number; error: { message: string; code: string | undefined; notBegun?: boolean } }} Reply */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const { path, pragmas } = /** @type {{ path: string; pragmas: string[] }} */ (workerData);
const db = new Database(path);
for (const pragma of pragmas) db.pragma(pragma);

// Checkpoints are this thread's own. SQLite's automatic one runs in any commit that finds the WAL
// over 1,000 pages; under load, with the main connection's readers holding back a complete one,
// that is nearly every commit, and each copies the same hot pages into the database file again
// (a third more bytes written a cargo in bench:pipeline). Instead the thread checkpoints once it
// has had no statement for a moment, and at least once a second while it stays busy. The file
// keeps at most 64 MiB of WAL once a checkpoint has reset it.
db.pragma('wal_autocheckpoint = 0');
db.pragma('journal_size_limit = 67108864');
const CHECKPOINT_WHEN_IDLE_MS = 100;
const CHECKPOINT_AT_LEAST_EVERY_MS = 1000;
let lastCheckpointAt = Date.now();
let lastWriteAt = 0;
/** @type {NodeJS.Timeout | null} */
let idleTimer = null;

function checkpoint() {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  lastCheckpointAt = Date.now();
  // PASSIVE never waits for readers; what it cannot copy now, the next one does. A failure here
  // costs nothing but a longer WAL: the next write tries again.
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {}
}

function checkpointWhenIdle() {
  idleTimer = null;
  if (db.inTransaction) return;
  const idleFor = Date.now() - lastWriteAt;
  if (idleFor >= CHECKPOINT_WHEN_IDLE_MS) checkpoint();
  else idleTimer = setTimeout(checkpointWhenIdle, CHECKPOINT_WHEN_IDLE_MS - idleFor);
}

/** After a statement that wrote: checkpoint now if the last one is a second old, else when idle. */
function wrote() {
  if (db.inTransaction) return;
  lastWriteAt = Date.now();
  if (lastWriteAt - lastCheckpointAt >= CHECKPOINT_AT_LEAST_EVERY_MS) checkpoint();
  else if (!idleTimer) idleTimer = setTimeout(checkpointWhenIdle, CHECKPOINT_WHEN_IDLE_MS);
}

// Commits of other connections (another barge process on the file, the CLI), seen by this
// connection's PRAGMA data_version, which changes with every commit but its own. The main
// connection cannot tell: this thread's commits change its data_version too. The check is a read
// of the WAL index in shared memory, a few microseconds; it runs while the main thread watches.
// Why not fs.watch on the -wal file: it fires on this process's own writes and on checkpoints,
// the file comes and goes with the last connection, and inotify does not cross network mounts.
const WATCH_EVERY_MS = 100;
const dataVersionQuery = db.prepare('pragma data_version').pluck();
/** @type {NodeJS.Timeout | null} */
let watchTimer = null;
/** @type {number | null} */
let dataVersion = null;

function checkDataVersion() {
  // Inside a transaction the value is the transaction's snapshot: the next check sees the change.
  if (db.inTransaction) return;
  try {
    const version = /** @type {number} */ (dataVersionQuery.get());
    if (dataVersion !== null && version !== dataVersion) port.postMessage({ changed: true });
    dataVersion = version;
  } catch {
    // Tried again at the next tick.
  }
}

/** @param {boolean} on */
function watch(on) {
  if (watchTimer) clearInterval(watchTimer);
  watchTimer = null;
  dataVersion = null;
  if (!on) return;
  checkDataVersion();
  watchTimer = setInterval(checkDataVersion, WATCH_EVERY_MS);
}

/** @type {Map<string, import('better-sqlite3').Statement>} */
const statements = new Map();

/** @param {string} sql */
function prepared(sql) {
  let statement = statements.get(sql);
  if (!statement) {
    // Bounded: multi-row statements of varying length each have their own text.
    if (statements.size >= 500) statements.clear();
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

/**
 * What a statement (or the BEGIN before it: `notBegun`) threw, with SQLite's code.
 * @param {number} id @param {unknown} err @param {boolean} notBegun
 * @returns {Reply}
 */
function errorReply(id, err, notBegun) {
  const e = /** @type {{ message?: string; code?: string }} */ (err);
  return { id, error: { message: String(e.message ?? err), code: e.code, ...(notBegun ? { notBegun } : {}) } };
}

/**
 * Begins a transaction; the reply to send instead of running it when BEGIN fails. IMMEDIATE: the
 * write lock is taken at BEGIN, so a transaction that reads first cannot fail later on a snapshot
 * another process's commit made stale (SQLITE_BUSY_SNAPSHOT).
 * @param {number} id
 * @returns {Reply | null}
 */
function begin(id) {
  try {
    prepared('begin immediate').run();
    return null;
  } catch (err) {
    return errorReply(id, err, true);
  }
}

/**
 * Runs one statement.
 * @param {{ sql: string; parameters: unknown[] }} query
 * @returns {Result}
 */
function run(query) {
  const statement = prepared(query.sql);
  if (statement.reader) return { rows: statement.all(query.parameters) };
  const { changes, lastInsertRowid } = statement.run(query.parameters);
  return { changes, lastInsertRowid };
}

/**
 * A transaction sent whole: every statement, then COMMIT, or ROLLBACK after the first that fails
 * (its error is the reply). Nothing waits for the other thread between the statements.
 * @param {Script} message
 * @returns {Reply}
 */
function runScript(message) {
  const notBegun = begin(message.id);
  if (notBegun) return notBegun;
  try {
    // Each statement's rows (none for one that returns none, e.g. an UPDATE without RETURNING).
    const results = message.script.map((query) => {
      const result = run(query);
      return 'rows' in result ? result.rows : [];
    });
    prepared('commit').run();
    return { id: message.id, results };
  } catch (err) {
    try {
      prepared('rollback').run();
    } catch {}
    return errorReply(message.id, err, false);
  }
}

port.on('message', (/** @type {Query | Script | 'close' | 'watch' | 'unwatch'} */ message) => {
  if (message === 'watch' || message === 'unwatch') {
    watch(message === 'watch');
    return;
  }
  if (message === 'close') {
    if (idleTimer) clearTimeout(idleTimer);
    watch(false);
    db.close();
    port.close();
    return;
  }
  if ('script' in message) {
    port.postMessage(runScript(message));
    wrote();
    return;
  }
  /** @type {Reply} */
  let reply;
  // Whether the statement changed the database: SQLite calls COMMIT read-only, so the end of a
  // transaction counts as a write too.
  let readonly = true;
  const inTransaction = db.inTransaction;
  if (message.begin) {
    const notBegun = begin(message.id);
    if (notBegun) {
      port.postMessage(notBegun);
      return;
    }
  }
  try {
    readonly = prepared(message.sql).readonly;
    reply = { id: message.id, ...run(message) };
  } catch (err) {
    reply = errorReply(message.id, err, false);
  }
  port.postMessage(reply);
  if (!readonly || (inTransaction && !db.inTransaction)) wrote();
});
