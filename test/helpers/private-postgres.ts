/**
 * A PostgreSQL server of the test's own, for tests that stop and start the server (a restart, a
 * crash): the shared server on 5432 serves every other test and is never touched. The cluster
 * lives in a temporary directory on a free loopback port with trust authentication and no fsync
 * (nothing here must survive a power cut). The binaries are found, not named by version:
 * BARGE_TEST_PG_BIN, else the newest /usr/lib/postgresql/<version>/bin (Debian's layout), else
 * `pg_config --bindir`. PostgreSQL refuses to run as root, so as root the cluster belongs to the
 * `postgres` user and its commands run through `runuser`.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './wait.js';

const run = promisify(execFile);

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Kills the server the way a crash or `pg_ctl stop -m immediate` does: no shutdown, connections cut. */
  stopImmediate(): Promise<void>;
  /** Starts the (stopped) server again on the same port and waits until it takes connections. */
  start(): Promise<void>;
  /** The server's log (for a failure message). */
  log(): string;
  /** Stops the server and removes its directory. */
  destroy(): Promise<void>;
}

/** The directory holding initdb, pg_ctl and postgres, or null when PostgreSQL is not installed. */
export async function findPostgresBinaries(): Promise<string | null> {
  const has = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  const configured = process.env.BARGE_TEST_PG_BIN;
  if (configured) {
    if (!has(configured)) throw new Error(`BARGE_TEST_PG_BIN=${configured} holds no initdb and pg_ctl`);
    return configured;
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => has(join(debian, v, 'bin')))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  try {
    const dir = (await run('pg_config', ['--bindir'])).stdout.trim();
    return has(dir) ? dir : null;
  } catch {
    return null;
  }
}

/**
 * Whether this run can start a private server. Under CI it must: a missing installation fails
 * the run instead of quietly leaving the restart test out.
 */
export async function privatePostgresAvailable(): Promise<boolean> {
  const bin = await findPostgresBinaries();
  if (bin === null && process.env.CI === 'true') {
    throw new Error('PostgreSQL binaries are required under CI (apt-get install postgresql) but none were found');
  }
  return bin !== null;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = await findPostgresBinaries();
  if (bin === null) throw new Error('no PostgreSQL binaries found');
  const dir = mkdtempSync(join(tmpdir(), 'barge-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
    chownSync(dir, await id('-u'), await id('-g'));
  }
  const pgRun = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), args);

  await pgRun('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await freePort();
  // Listen on loopback only, its socket in its own directory (not /var/run/postgresql, which may
  // belong to the shared server), and no fsync: the test kills the server, not the machine, so
  // what was written is in the kernel's cache. synchronous_commit stays on, as barge requires:
  // off, a commit answered just before the kill is lost (a 200 for a cargo that is not there).
  const serverOptions = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-k ${dir}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=100',
  ].join(' ');
  const start = async () => {
    await pgRun('pg_ctl', ['-D', data, '-l', logFile, '-o', serverOptions, '-w', '-t', '30', 'start']);
  };
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let running = true;
  return {
    url,
    port,
    async stopImmediate() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
    },
    async start() {
      await start();
      running = true;
      // pg_ctl -w returns once the server accepts connections; check it answers queries too.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.end();
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-5000) : ''),
    async destroy() {
      if (running) await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
