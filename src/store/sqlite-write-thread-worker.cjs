// @ts-check
/**
 * The SQLite write connection's thread (see sqlite-write-thread.ts): runs each compiled query it
 * is sent on its own connection and answers with the rows, or the row count and last rowid. Kept
 * as CommonJS so the same file runs from src/ under tsx (which does not reach worker threads) and
 * from dist/. One prepared statement per SQL text, in a bounded cache.
 */
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');

/** @typedef {{ id: number; sql: string; parameters: unknown[] }} Query */
/** @typedef {{ id: number; rows: unknown[] } | { id: number; changes: number; lastInsertRowid: number | bigint } | { id: number; error: { message: string; code: string | undefined } }} Reply */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const { path, pragmas } = /** @type {{ path: string; pragmas: string[] }} */ (workerData);
const db = new Database(path);
for (const pragma of pragmas) db.pragma(pragma);

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

port.on('message', (/** @type {Query | 'close'} */ message) => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  /** @type {Reply} */
  let reply;
  try {
    const statement = prepared(message.sql);
    if (statement.reader) {
      reply = { id: message.id, rows: statement.all(message.parameters) };
    } else {
      const { changes, lastInsertRowid } = statement.run(message.parameters);
      reply = { id: message.id, changes, lastInsertRowid };
    }
  } catch (err) {
    const e = /** @type {{ message?: string; code?: string }} */ (err);
    reply = { id: message.id, error: { message: String(e.message ?? err), code: e.code } };
  }
  port.postMessage(reply);
});
