/**
 * What a person sees when `barge serve` starts: readable log lines on a terminal (a pseudo-terminal
 * made by util-linux `script`), JSON lines when stdout is a pipe.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertBuildIsFresh, BARGE_BIN, killAtExit, nodeFlagsOf } from '../helpers/serve.js';
import { freePort } from '../helpers/wait.js';

/** Runs `barge serve` until it says it listens, then stops it; everything it printed on stdout. */
async function startAndStop(terminal: boolean): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'barge-serve-logs-'));
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BARGE_'))),
    BARGE_DATABASE_URL: `sqlite:${join(dir, 'barge.sqlite')}`,
    BARGE_LOG_LEVEL: 'info',
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    TERM: 'dumb',
  };
  const command = [process.execPath, ...nodeFlagsOf(BARGE_BIN), BARGE_BIN, 'serve'];
  const child = killAtExit(
    terminal
      ? spawn('script', ['-qfec', command.join(' '), '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(command[0] as string, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 20_000;
  while (!/listening on http/.test(out)) {
    assert.ok(Date.now() < deadline, `serve did not start: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGTERM');
  await exited;
  return out;
}

test('barge serve logs readable lines on a terminal and JSON lines into a pipe', async () => {
  assertBuildIsFresh();
  const tty = await startAndStop(true);
  assert.match(tty, /INFO.*Server listening at http:\/\/127\.0\.0\.1:\d+/);
  assert.doesNotMatch(tty, /\{"level":/);

  const piped = await startAndStop(false);
  const logs = piped
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string });
  assert.ok(
    logs.some((l) => l.level === 30 && /Server listening/.test(l.msg)),
    piped,
  );
  assert.doesNotMatch(piped, /INFO/);
});
