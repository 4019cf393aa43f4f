/**
 * A bench run's life: its time limit, what goes away on any exit, Ctrl-C included (children, temp
 * dirs, PostgreSQL schemas), and how the end of its main function ends the process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { children, stopChild } from './processes.js';

const tempDirs = new Set<string>();
/** Clean-ups that need a round trip (PostgreSQL schemas); temp dirs go synchronously at exit. */
const pendingDrops = new Set<() => Promise<void>>();

/** A fresh temp dir, removed at exit unless removeTempDir has removed it already. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Runs `drop` on an interrupt (if the bench stops gracefully) until the returned function is called. */
export function dropOnInterrupt(drop: () => Promise<void>): () => void {
  pendingDrops.add(drop);
  return () => pendingDrops.delete(drop);
}

export interface CleanupOptions {
  /**
   * On SIGINT or SIGTERM: 'graceful' stops every child (SIGTERM, SIGKILL after `childTimeoutMs`),
   * then drops what dropOnInterrupt registered; 'immediate' exits at once. Either way the exit
   * SIGKILLs whatever still runs and removes the temp dirs.
   */
  onSignal: 'graceful' | 'immediate';
  childTimeoutMs: number;
  /** Called first on a signal, e.g. to stop the load generator. */
  interrupted?: () => void;
}

/**
 * Installs the clean-up on exit and on SIGINT / SIGTERM, and the whole run's time limit: past
 * `limitMs`, the bench (`name`: `bench:<name>`) says so and exits with 1.
 */
export function installCleanup(name: string, limitMs: number, options: CleanupOptions): void {
  const interrupt = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping\n`);
    options.interrupted?.();
    if (options.onSignal === 'immediate') process.exit(130);
    void Promise.allSettled(children().map((child) => stopChild(child, options.childTimeoutMs)))
      .then(() => Promise.allSettled([...pendingDrops].map((drop) => drop())))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  // Last resort, synchronous: whatever is still running dies with us.
  process.on('exit', () => {
    for (const child of children()) child.kill('SIGKILL');
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  setTimeout(() => {
    process.stderr.write(`${name}: time limit of ${Math.round(limitMs / 1000)} s exceeded\n`);
    process.exit(1);
  }, limitMs).unref();
}

/**
 * Runs the bench's main and ends the process when it settles: nothing may keep it alive past the
 * report (a child's pipe, a timer). A failure prints `<name>: <message>` (with `detail: 'stack'`,
 * the stack) and exits with 1.
 */
export function runMain(name: string, main: () => Promise<void>, detail: 'message' | 'stack'): void {
  main().then(
    () => process.exit(),
    (err: unknown) => {
      const text = err instanceof Error ? (detail === 'stack' ? (err.stack ?? err.message) : err.message) : String(err);
      process.stderr.write(`${name}: ${text}\n`);
      process.exit(1);
    },
  );
}
