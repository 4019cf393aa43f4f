/** One-shot `barge` commands in tests: the built command, run as installed, with a clean environment. */
import { execFile } from 'node:child_process';
import { BARGE_BIN, nodeFlagsOf } from './serve.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `barge <args>` against `databaseUrl` and resolves when it exits: nothing BARGE_* (nor HOST,
 * PORT) of the test run's environment is inherited; `env` adds to it.
 */
export function runBarge(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('BARGE_') && name !== 'HOST' && name !== 'PORT') clean[name] = value;
  }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeFlagsOf(BARGE_BIN), BARGE_BIN, ...args],
      { env: { ...clean, BARGE_DATABASE_URL: databaseUrl, BARGE_LOG_LEVEL: 'silent', ...env }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}
