/**
 * Builds the dashboard (dashboard/src: TSX with Preact, uPlot) into dist/dashboard/: esbuild
 * bundles it into one script and one stylesheet whose names carry their content's hash, and the one
 * page (dashboard/index.html) is written naming them. Part of `npm run build`, so `npm install`
 * (its `prepare`) builds it too: nothing is fetched at run time, from a CDN or anywhere else.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'dashboard');
const out = join(root, 'dist', 'dashboard');
const assets = join(out, 'assets');

rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: { app: 'dashboard/src/main.tsx' },
  tsconfig: 'dashboard/tsconfig.json',
  bundle: true,
  format: 'esm',
  // Browsers of the last few years: native dialog, :has(), top-level await are all there.
  target: ['chrome111', 'edge111', 'firefox114', 'safari16.4'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: 'linked',
  outdir: assets,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const named = (extension) => {
  const file = outputs.find((name) => name.startsWith('app-') && name.endsWith(extension));
  if (!file) throw new Error(`the dashboard build made no app-*${extension}`);
  return file;
};

const hashed = (file) => {
  const content = readFileSync(join(source, file));
  const name = file.replace(/\.(\w+)$/, `-${createHash('sha256').update(content).digest('hex').slice(0, 8)}.$1`);
  copyFileSync(join(source, file), join(assets, name));
  return name;
};

const page = readFileSync(join(source, 'index.html'), 'utf8')
  .replace('%APP_JS%', `/dashboard/assets/${named('.js')}`)
  .replace('%APP_CSS%', `/dashboard/assets/${named('.css')}`)
  .replace('%FAVICON%', `/dashboard/assets/${hashed('favicon.svg')}`);
writeFileSync(join(out, 'index.html'), page);
