/** `barge` child processes in tests: the built command (checked fresh), run with its node flags, read line by line. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, sleep } from './wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built `barge` command; child-process tests run what `npm run build` produced. */
export const BARGE_BIN = join(ROOT, 'dist/src/cli/main.js');

/**
 * Fails when dist/ is missing or older than src/: a child-process test against a stale build would
 * test yesterday's code. `npm test` builds first; run `npm run build` before a single file.
 */
export function assertBuildIsFresh(): void {
  if (!existsSync(BARGE_BIN)) throw new Error(`${BARGE_BIN} does not exist: run \`npm run build\` first`);
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const built = join(ROOT, 'dist', relative(ROOT, path).replace(/\.ts$/, '.js'));
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(path).mtimeMs) stale.push(relative(ROOT, path));
      }
    }
  };
  walk(join(ROOT, 'src'));
  if (stale.length > 0) {
    throw new Error(`dist/ is older than ${stale.slice(0, 5).join(', ')}: run \`npm run build\` first`);
  }
}

/** Every child still running: killed when the test file's process exits, so a failed test never leaves one behind. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Registers a spawned child to be killed, if still running, when the test file's process exits. */
export function killAtExit<T extends ChildProcess>(child: T): T {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One `barge` child process: its stdout kept line by line, and its stderr split into the log lines
 * (JSON; `serve --json` logs there) and the rest as text (warnings, notices, a crash's trace).
 */
export class BargeProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  readonly logLines: string[] = [];
  /** What stderr held besides log lines. */
  stderr = '';
  readonly exited: Promise<Exit>;
  private partial = '';
  private partialErr = '';

  constructor(args: string[], env: Record<string, string>) {
    // A clean environment: no BARGE_* setting of the developer's shell leaks into the test.
    const base = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('BARGE_') && k !== 'PORT'),
    );
    this.child = spawn(process.execPath, [...nodeFlagsOf(BARGE_BIN), BARGE_BIN, ...args], {
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.partialErr + chunk).split('\n');
      this.partialErr = parts.pop() ?? '';
      for (const line of parts) {
        if (line.startsWith('{"level":')) this.logLines.push(line);
        // Keep the tail only: enough to explain a failure.
        else this.stderr = `${this.stderr}${line}\n`.slice(-20_000);
      }
    });
    killAtExit(this.child);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The lines of both streams that are JSON objects: the `--json` start-up line, and the logs. */
  jsonLines(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const line of [...this.lines, ...this.logLines]) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not JSON: ignore
      }
    }
    return out;
  }

  /** Waits for the `serve --json` start-up line and returns it. */
  async started(timeoutMs = 20_000): Promise<{ role: string; url: string | null }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.jsonLines().find((l) => typeof l.role === 'string' && 'url' in l && !('level' in l));
      if (line) return line as { role: string; url: string | null };
      if (!this.alive) {
        throw new Error(`barge exited (${JSON.stringify(await this.exited)}) before starting; stderr:\n${this.stderr}`);
      }
      if (Date.now() > deadline) {
        this.child.kill('SIGKILL');
        throw new Error(`barge did not start within ${timeoutMs} ms; stderr:\n${this.stderr}`);
      }
      await sleep(20);
    }
  }

  /** Sends `signal` and waits (bounded) for the exit; SIGKILLs and fails if it does not come. */
  async stop(signal: NodeJS.Signals, timeoutMs = 20_000): Promise<Exit> {
    if (!this.alive) return this.exited;
    this.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.child.kill('SIGKILL');
      await this.exited;
      throw new Error(`barge did not exit within ${timeoutMs} ms of ${signal}; stderr:\n${this.stderr}`);
    }
    return outcome;
  }
}

/**
 * The node flags of a built entry point's `#!/usr/bin/env -S node <flags>` line: children run with
 * them, as the installed `barge` does, on the node that runs the tests.
 */
export function nodeFlagsOf(path: string): string[] {
  const first = readFileSync(path, 'utf8').split('\n', 1)[0] ?? '';
  return /^#!\/usr\/bin\/env -S node (.+)$/.exec(first)?.[1]?.split(' ').filter(Boolean) ?? [];
}

/** POST /cargo/load to a running `barge serve`; asserts a 200 and resolves to the cargo id. */
export async function loadOverHttp(url: string, key: string, body: unknown): Promise<string> {
  const res = await fetch(`${url}/cargo/load`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /cargo/load answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { cargo_id: string }).cargo_id;
}

/**
 * `count` API processes (`serve --role api`, production) on one database, each on its own loopback
 * port, started one after the other; `env` adds to or overrides their environment.
 */
export async function startApiProcesses(
  databaseUrl: string,
  count: number,
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: BargeProcess; url: string }[]> {
  const servers: { child: BargeProcess; url: string }[] = [];
  for (let i = 0; i < count; i++) {
    const child = new BargeProcess(['serve', '--role', 'api', '--json'], {
      BARGE_DATABASE_URL: databaseUrl,
      BARGE_ENV: 'production',
      BARGE_LOG_LEVEL: 'warn',
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      ...env,
    });
    servers.push({ child, url: (await child.started()).url as string });
  }
  return servers;
}
