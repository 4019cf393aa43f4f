/**
 * Which `barge` the benches' children run: this checkout's dist/src/cli/main.js, built first as an
 * installed `barge` is (`--no-build` skips the build), or another entry point given with `--cli`
 * (another checkout's dist/src/cli/main.js, or a src/cli/main.ts run with tsx) to compare two
 * versions side by side.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './processes.js';
import { log } from './report.js';

export interface EntryPoint {
  /** The entry point the children run. */
  cli: string;
  /** The checkout it belongs to: the children's working directory, where packages resolve. */
  root: string;
  /** Build this checkout before the runs. */
  build: boolean;
}

/** From the `--cli` and `--no-build` flags. */
export function entryPoint(cliFlag: string | undefined, noBuild: boolean): EntryPoint {
  const cli = resolve(cliFlag ?? join(ROOT, 'dist/src/cli/main.js'));
  return { cli, root: checkoutRoot(cli), build: cliFlag === undefined && !noBuild };
}

/** `npm run build` in this checkout, when asked. */
export async function buildIfAsked(entry: EntryPoint): Promise<void> {
  if (!entry.build) return;
  log('building (npm run build)');
  await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: ROOT, timeout: 180_000 });
}

/** The directory of the package.json above the entry point. */
function checkoutRoot(cli: string): string {
  for (let dir = dirname(cli); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  throw new Error(`no package.json above ${cli}`);
}
