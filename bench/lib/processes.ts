/**
 * The benches' child processes: starting a `barge serve` child or a bare server, waiting for the
 * line it prints once it is ready, stopping it, and the environment a `barge` child runs with.
 * Every child started here is tracked, so that lifecycle.ts can stop it on any exit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { nodeFlagsOf } from '../../test/helpers/serve.js';

/** The checkout the benches belong to: its dist/ and src/ are what the children run. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const running = new Set<ChildProcess>();

/** The children still running. */
export function children(): ChildProcess[] {
  return [...running];
}

/** Tracks `child` until it exits. */
export function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

export interface ChildSpec<T> {
  /** The child in errors: `<name> did not start in time`. */
  name: string;
  /** The prefix of the child's other stdout lines, passed on to our stderr: `[<label>] <line>`. */
  label: string;
  /** node's arguments. */
  args: string[];
  /** A command node runs under, with its flags (valgrind: `callgrindCommand`). */
  under?: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** How long the child may take to print its ready line. */
  timeoutMs: number;
  /** What the ready line says, or null for any other line. */
  ready: (line: string) => T | null;
  /** The end of the error when the child exits before its ready line: `<name> exited with code N <…>`. */
  exitedWhen: 'before listening' | 'at start';
}

/**
 * Starts a node child and resolves once it prints its ready line, with what that line says. Its
 * other output is passed on to our stderr, so warnings show and the pipe never fills.
 */
export async function startChild<T>(spec: ChildSpec<T>): Promise<{ child: ChildProcess; ready: T }> {
  const [command, ...args] = [...(spec.under ?? []), process.execPath, ...spec.args];
  const child = track(
    spawn(command as string, args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'inherit'] }),
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const ready = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${spec.name} did not start in time`)), spec.timeoutMs);
    child.once('exit', (code) => reject(new Error(`${spec.name} exited with code ${code} ${spec.exitedWhen}`)));
    lines.on('line', (line) => {
      const said = spec.ready(line);
      if (said !== null) {
        clearTimeout(timer);
        resolve(said);
      } else {
        process.stderr.write(`[${spec.label}] ${line}\n`);
      }
    });
  });
  return { child, ready };
}

/** The ready line of a bare server: one JSON object `{url}`. */
export function urlLine(line: string): string | null {
  try {
    const parsed = JSON.parse(line) as { url?: unknown };
    return typeof parsed.url === 'string' ? parsed.url : null;
  } catch {
    return null;
  }
}

/** The ready line of `barge serve --json`: `{role, url}`, url null for a role that does not listen. */
export function serveReadyLine(line: string): { url: string | null } | null {
  try {
    const parsed = JSON.parse(line) as { role?: unknown; url?: unknown };
    if (typeof parsed.role !== 'string') return null;
    return { url: typeof parsed.url === 'string' ? parsed.url : null };
  } catch {
    return null;
  }
}

export interface Service {
  child: ChildProcess;
  /** Where the service listens; null for `--role worker`. */
  url: string | null;
}

export interface ServeSpec extends Omit<ChildSpec<unknown>, 'args' | 'ready'> {
  /** The `barge` entry point: a .js file, or a .ts file run with tsx. */
  cli: string;
  role: 'all' | 'api' | 'worker';
  /** node flags before the entry point. */
  nodeFlags: string[];
}

/** Starts `barge serve --role <role> --port 0 --json` and resolves once it printed its ready line. */
export async function startServe(spec: ServeSpec): Promise<Service> {
  const { cli, role, nodeFlags, ...child } = spec;
  // A built entry point runs as the installed `barge` does: with the node flags of its #! line.
  const entry = cli.endsWith('.ts') ? ['--import', 'tsx', cli] : [...nodeFlagsOf(cli), cli];
  const args = [...nodeFlags, ...entry, 'serve', '--role', role, '--port', '0', '--json'];
  const started = await startChild({ ...child, args, ready: serveReadyLine });
  return { child: started.child, url: started.ready.url };
}

/** SIGTERM (a service then finishes its in-flight work), SIGKILL if it hangs past `timeoutMs`. */
export async function stopChild(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/**
 * The environment of a `barge` child: ours minus BARGE_*, HOST, PORT and NODE_OPTIONS (the child
 * should run as a plain `barge serve` would), then BARGE_ENV=production and the bench's settings.
 */
export function bargeEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(
    ([name]) => !name.startsWith('BARGE_') && !['HOST', 'PORT', 'NODE_OPTIONS'].includes(name),
  );
  return { ...Object.fromEntries(inherited), BARGE_ENV: 'production', ...settings };
}

/**
 * valgrind's callgrind, counting every instruction a child runs (all its threads) into
 * `dir/callgrind.<pid>`: a figure that does not move with what else the machine does, where a
 * rate on a shared machine moves by 10 %. The child runs about 50 times slower.
 */
export function callgrindCommand(dir: string): string[] {
  return ['valgrind', '--tool=callgrind', `--callgrind-out-file=${join(dir, 'callgrind.%p')}`];
}

/** The instructions callgrind counted for the child `pid` that ran under `callgrindCommand(dir)`. */
export function callgrindInstructions(dir: string, pid: number): number {
  const file = join(dir, `callgrind.${pid}`);
  const summary = /^summary: (\d+)$/m.exec(readFileSync(file, 'utf8'));
  if (!summary) throw new Error(`no summary line in ${file}`);
  return Number(summary[1]);
}

/** node flags that make a child write a V8 CPU profile into `dir`, or none. */
export function cpuProfFlags(dir: string | null): string[] {
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}
