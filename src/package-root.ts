/** Where the package's own files are (package.json, the shipped model catalog), from src/ (tests) or dist/src/ (the installed command). */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding barge's package.json; null if none is found above this module. */
export function packageRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return null;
}

/** The package version. */
export function packageVersion(): string {
  const root = packageRoot();
  if (root === null) return '0.0.0';
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}
