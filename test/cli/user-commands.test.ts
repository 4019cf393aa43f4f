/**
 * The user commands (`barge submit`, `results`, `wait`, `cancel`, `list`) as a person runs them:
 * built `barge` children talking HTTP to a `barge serve` child. A 2,000-line file interrupted with
 * SIGINT halfway and resumed makes exactly 2,000 cargo; results come back in input order.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PIPELINING } from '../../src/cli/undici-transport.js';
import { Barge } from '../../src/client/index.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { serveHarness } from '../helpers/harness.js';
import { BARGE_BIN, nodeFlagsOf } from '../helpers/serve.js';
import { freePort, waitFor } from '../helpers/wait.js';

const LINES = 2000;
const requestLine = (n: number) =>
  JSON.stringify({
    params: { model: 'svc-mock', max_tokens: 20, messages: [{ role: 'user', content: `line ${n}` }] },
    metadata: { n },
  });
const mapOf = (path: string) =>
  readFileSync(`${path}.cargo`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { line: number; cargo_id: string });

for (const backend of await backends({ childProcesses: true })) {
  describe(`barge's user commands against barge serve on ${backend.name}`, () => {
    const suite = serveHarness(backend);
    const dir = mkdtempSync(join(tmpdir(), 'barge-user-'));
    let url = '';
    const project = async () => {
      if (url === '') url = (await suite.serveAll({ BARGE_MOCK_LATENCY_MS: '300' })).url;
      const { key } = await createProjectWithKey(suite.db.database);
      return { key, args: ['--url', url, '--key', key] };
    };
    const run = async (args: string[]) => {
      const child = suite.spawn(args, {});
      const exit = await child.exited;
      return { code: exit.code, stdout: child.lines.join('\n'), stderr: child.stderr };
    };

    test('a 2,000-line file interrupted halfway and resumed makes exactly 2,000 cargo; results come in input order', async () => {
      const { key, args } = await project();
      const file = join(dir, 'requests.jsonl');
      writeFileSync(file, `${Array.from({ length: LINES }, (_, i) => requestLine(i + 1)).join('\n')}\n`);

      const first = suite.spawn(['submit', '--file', file, '--concurrency', '8', ...args], {});
      await waitFor(
        'half the map',
        () => {
          try {
            return mapOf(file).length;
          } catch {
            return 0;
          }
        },
        (n) => n >= LINES / 2,
        { timeoutMs: 60_000, intervalMs: 10 },
      );
      first.child.kill('SIGINT');
      const interrupted = await first.exited;
      assert.equal(interrupted.code, 130, first.stderr);
      const partial = mapOf(file).length;
      assert.ok(partial < LINES, `the first run finished (${partial} lines) before SIGINT`);
      assert.match(first.lines.join('\n'), /Interrupted: run the same command again/);

      const resumed = await run(['submit', '--file', file, '--json', ...args]);
      assert.equal(resumed.code, 0, resumed.stderr);
      const summary = JSON.parse(resumed.stdout) as { submitted: number; skipped: number; refused: unknown[] };
      assert.equal(summary.skipped, partial);
      assert.equal(summary.submitted, LINES - partial);
      assert.deepEqual(summary.refused, []);

      const map = mapOf(file);
      assert.equal(map.length, LINES);
      assert.deepEqual(
        map.map((e) => e.line).sort((a, b) => a - b),
        Array.from({ length: LINES }, (_, i) => i + 1),
      );
      const listed = new Set<string>();
      for await (const cargo of new Barge({ baseUrl: url, apiKey: key }).list({ limit: 1000 }))
        listed.add(cargo.cargo_id);
      assert.equal(listed.size, LINES, 'the service holds exactly one cargo per line');
      assert.deepEqual(new Set(map.map((e) => e.cargo_id)), listed);

      // A third run has nothing left to do.
      const again = JSON.parse((await run(['submit', '--file', file, '--json', ...args])).stdout) as {
        submitted: number;
      };
      assert.equal(again.submitted, 0);

      const out = join(dir, 'results.jsonl');
      const results = await run(['results', '--file', file, '--out', out, '--json', ...args]);
      assert.equal(results.code, 0, results.stderr);
      assert.deepEqual(JSON.parse(results.stdout), {
        out,
        lines: LINES,
        succeeded: LINES,
        failed: 0,
        not_submitted: 0,
      });
      const written = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const cargoOf = new Map(map.map((e) => [e.line, e.cargo_id]));
      assert.equal(written.length, LINES);
      written.forEach((entry, i) => {
        assert.equal(entry.line, i + 1);
        assert.equal(entry.cargo_id, cargoOf.get(i + 1));
        assert.equal(entry.success, true);
        assert.deepEqual(entry.metadata, { n: i + 1 });
        assert.match(JSON.stringify(entry.response), new RegExp(`line ${i + 1}\\b`));
      });
    });

    test('refused lines are reported with their line numbers and the others go through; exit 1', async () => {
      const { args } = await project();
      const file = join(dir, 'some-bad.jsonl');
      const bad = JSON.stringify({
        params: { model: 'svc-mock', temperature: 3, messages: [{ role: 'user', content: 'x' }] },
      });
      writeFileSync(file, [requestLine(1), bad, requestLine(3), 'not json', '', requestLine(6)].join('\n'));
      const plain = await run(['submit', '--file', file, ...args]);
      assert.equal(plain.code, 1);
      assert.match(plain.stderr, /^line 2: .*temperature/m);
      assert.match(plain.stderr, /^line 4: Request body is not valid JSON/m);
      assert.match(plain.stdout, /^3 submitted, 0 already in .*, 2 refused, of 6 lines$/m);
      assert.deepEqual(
        mapOf(file)
          .map((e) => e.line)
          .sort(),
        [1, 3, 6],
      );

      const out = join(dir, 'some-bad-results.jsonl');
      const results = await run(['results', '--file', file, '--out', out, ...args]);
      assert.equal(results.code, 1);
      const written = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { line: number; cargo_id: string | null });
      assert.deepEqual(
        written.map((w) => [w.line, w.cargo_id === null]),
        [
          [1, false],
          [2, true],
          [3, false],
          [4, true],
          [5, true],
          [6, false],
        ],
      );
    });

    test('a person sees every refused line: above the bar on a terminal, however short the run; piped, the last count once', async () => {
      const { args } = await project();
      const file = join(dir, 'terminal.jsonl');
      writeFileSync(file, [requestLine(1), 'not json', requestLine(3)].join('\n'));
      // A terminal: `script` runs the command on a pseudo-terminal and copies what it shows.
      const command = [process.execPath, ...nodeFlagsOf(BARGE_BIN), BARGE_BIN, 'submit', '--file', file, ...args];
      const terminal = spawnSync('script', ['-qec', command.join(' '), '/dev/null'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(terminal.status, 1, terminal.stdout);
      assert.match(terminal.stdout, /line 2: Request body is not valid JSON/);
      assert.match(terminal.stdout, /submit \[█+\] 100% \| 3\/3 \| \d+\/s \| ETA 0s/);
      assert.match(terminal.stdout, /2 submitted, 0 already in .*, 1 refused, of 3 lines/);

      // Piped, and run again: only the refused line is left; its count is written once.
      const again = await run(['submit', '--file', file, ...args]);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /^line 2: Request body is not valid JSON/m);
      assert.deepEqual(again.stderr.match(/^submit: .*$/gm)?.length, 1, again.stderr);
    });

    test('results keep each metadata as it was written: a number past 2^53, integer-like keys after others', async () => {
      const { args } = await project();
      const file = join(dir, 'verbatim.jsonl');
      const metadata = '{"b":1,"2":"two","id":12345678901234567890,"f":1.50}';
      const line = (content: string) =>
        `{"params":{"model":"svc-mock","max_tokens":20,"messages":[{"role":"user","content":"${content}"}]},"metadata":${metadata}}`;
      writeFileSync(file, `${line('hello')}\n${line('svc-mock:fail')}\n`);
      const submitted = await run(['submit', '--file', file, ...args]);
      assert.equal(submitted.code, 0, submitted.stderr);

      const out = join(dir, 'verbatim-results.jsonl');
      const results = await run(['results', '--file', file, '--out', out, ...args]);
      assert.equal(results.code, 1, 'one cargo failed');
      const [ok, failed] = readFileSync(out, 'utf8').trim().split('\n') as [string, string];
      assert.ok(ok.endsWith(`,"metadata":${metadata}}`), ok);
      assert.ok(failed.endsWith(`,"metadata":${metadata}}`), failed);
      const [okEntry, failedEntry] = [JSON.parse(ok), JSON.parse(failed)];
      assert.deepEqual(Object.keys(okEntry), ['line', 'cargo_id', 'success', 'response', 'error_message', 'metadata']);
      assert.deepEqual([okEntry.line, okEntry.success, okEntry.error_message], [1, true, null]);
      assert.match(okEntry.response.content[0].text, /hello/);
      assert.deepEqual([failedEntry.line, failedEntry.success, failedEntry.response], [2, false, null]);
      assert.match(failedEntry.error_message, /svc-mock was asked to fail/);
    });

    test('submit one prompt, from the command line or standard input, and wait for it', async () => {
      const { args } = await project();
      const id = await run(['submit', '--model', 'svc-mock', 'Say hello to the river.', ...args]);
      assert.equal(id.code, 0, id.stderr);
      assert.match(id.stdout, /^crg_\w+$/);

      const waited = await run(['wait', id.stdout, '--json', ...args]);
      assert.equal(waited.code, 0, waited.stderr);
      assert.deepEqual(JSON.parse(waited.stdout), {
        data: [{ cargo_id: id.stdout, status: 'completed', success: true, error_message: null }],
      });

      // --wait: the id to stderr, the answer's text to stdout; `-` reads the prompt from stdin.
      const piped = spawnSync(
        process.execPath,
        [...nodeFlagsOf(BARGE_BIN), BARGE_BIN, 'submit', '--model', 'svc-mock', '--wait', '-', ...args],
        { input: 'Hello from stdin', encoding: 'utf8', timeout: 30_000 },
      );
      assert.equal(piped.status, 0, piped.stderr);
      assert.match(piped.stderr, /^crg_\w+\n$/);
      assert.match(piped.stdout, /Hello from stdin/);

      const failed = await run(['submit', '--model', 'svc-mock', '--wait', 'svc-mock:fail', ...args]);
      assert.equal(failed.code, 1);
      assert.match(failed.stdout, /^failed: /);

      const listed = await run(['list', '--json', '--limit', '2', ...args]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal((JSON.parse(listed.stdout) as { data: unknown[] }).data.length, 2);
    });

    test('tail prints a line for each status change until Ctrl-C', async () => {
      const { args } = await project();
      const tail = suite.spawn(['tail', '--interval', '100', '--json', ...args], {});
      const id = (await run(['submit', '--model', 'svc-mock', 'followed', ...args])).stdout;
      const statuses = () =>
        tail.lines.filter(Boolean).map((l) => JSON.parse(l) as { cargo_id: string; status: string });
      await waitFor(
        'the completed line',
        () => statuses(),
        (seen) => seen.some((l) => l.cargo_id === id && l.status === 'completed'),
        { timeoutMs: 20_000 },
      );
      const mine = statuses()
        .filter((l) => l.cargo_id === id)
        .map((l) => l.status);
      assert.equal(new Set(mine).size, mine.length, `a status printed twice: ${mine}`);
      tail.child.kill('SIGINT');
      assert.equal((await tail.exited).code, 0);
    });

    test('cancel, and the exit codes: 1 refused, 2 usage, 3 unreachable', async () => {
      const { args } = await project();
      const done = await run(['submit', '--model', 'svc-mock', '--wait', 'quick', ...args]);
      assert.equal(done.code, 0, done.stderr);
      const id = done.stderr.trim();
      const refused = await run(['cancel', id, '--json', ...args]);
      assert.equal(refused.code, 1);
      assert.match(JSON.parse(refused.stdout).error, /cannot|completed/);

      const usage = await run(['submit', 'no model given', '--json', ...args]);
      assert.equal(usage.code, 2);
      assert.match(JSON.parse(usage.stdout).error, /--model is required/);

      const closed = `http://127.0.0.1:${await freePort()}`;
      const unreachable = await run(['list', '--url', closed, '--key', 'barge_sk_x']);
      assert.equal(unreachable.code, 3);
      assert.match(unreachable.stderr, /did not answer/);

      // A key or an address that cannot work is the command line's fault, said at once.
      const url = args[args.indexOf('--url') + 1] as string;
      const noKey = await run(['list', '--url', url, '--json']);
      assert.equal(noKey.code, 2);
      assert.match(JSON.parse(noKey.stdout).error, /no API key/);
      const badUrl = await run(['list', '--url', url.replace('http://', ''), '--key', 'barge_sk_x', '--json']);
      assert.equal(badUrl.code, 2);
      assert.match(JSON.parse(badUrl.stdout).error, /--url must be an http\(s\) URL/);
    });

    test('a cargo with no result to wait for (unknown here) is a failed item of wait and results, not the end of them', async () => {
      const { args } = await project();
      const file = join(dir, 'missing.jsonl');
      writeFileSync(file, `${[requestLine(1), requestLine(2)].join('\n')}\n`);
      assert.equal((await run(['submit', '--file', file, ...args])).code, 0);
      const map = readFileSync(`${file}.cargo`, 'utf8');
      const known = (JSON.parse(map.split('\n')[0] as string) as { cargo_id: string }).cargo_id;
      const unknown = `crg_${'0'.repeat(26)}`;
      // Line 2's cargo is one this key cannot see.
      writeFileSync(
        `${file}.cargo`,
        map
          .split('\n')
          .filter(Boolean)
          .map((l) => {
            const entry = JSON.parse(l) as { line: number; cargo_id: string };
            return JSON.stringify(entry.line === 2 ? { ...entry, cargo_id: unknown } : entry);
          })
          .join('\n'),
      );

      const waited = await run(['wait', known, unknown, '--json', ...args]);
      assert.equal(waited.code, 1, waited.stderr);
      const data = (JSON.parse(waited.stdout) as { data: { cargo_id: string; status: string }[] }).data;
      assert.deepEqual(
        data.map((d) => [d.cargo_id, d.status]),
        [
          [known, 'completed'],
          [unknown, 'not_found'],
        ],
      );

      const out = join(dir, 'missing.out.jsonl');
      const results = await run(['results', '--file', file, '--out', out, ...args]);
      assert.equal(results.code, 1, results.stderr);
      const written = readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { line: number; success: boolean; error_message: string | null });
      assert.deepEqual(
        written.map((w) => [w.line, w.success]),
        [
          [1, true],
          [2, false],
        ],
      );
      assert.match(written[1]?.error_message ?? '', /404/);
    });

    test('a bulk submit pipelines 8 requests to a connection, and a connection cut with answers owed loses and doubles no line', async () => {
      const { key, args } = await project();
      const target = new URL(args[args.indexOf('--url') + 1] as string);
      const proxy = await cuttingProxy(target);
      try {
        const lines = 400;
        const file = join(dir, 'pipelined.jsonl');
        writeFileSync(file, `${Array.from({ length: lines }, (_, i) => requestLine(i + 1)).join('\n')}\n`);
        const run16 = await run([
          'submit',
          '--file',
          file,
          '--concurrency',
          '16',
          '--json',
          '--url',
          proxy.url,
          '--key',
          key,
        ]);
        assert.equal(run16.code, 0, run16.stderr);
        const summary = JSON.parse(run16.stdout) as { submitted: number; refused: unknown[] };
        assert.equal(summary.submitted, lines);
        assert.deepEqual(summary.refused, []);
        assert.ok(proxy.mostOpen() <= 16 / PIPELINING, `${proxy.mostOpen()} connections open at once`);
        assert.ok(
          proxy.owedAtCut() > 1,
          `${proxy.owedAtCut()} requests sent on the cut connection before its first answer`,
        );

        const map = mapOf(file);
        assert.equal(map.length, lines);
        const listed = new Set<string>();
        for await (const cargo of new Barge({ baseUrl: target.origin, apiKey: key }).list({ limit: 1000 }))
          listed.add(cargo.cargo_id);
        assert.equal(listed.size, lines, 'the service holds exactly one cargo per line');
        assert.deepEqual(new Set(map.map((e) => e.cargo_id)), listed);
      } finally {
        await proxy.close();
      }
    });

    test('a bulk submit with a refused key, or no service, stops at once, says what was done, and how to go on', async () => {
      const { args } = await project();
      const file = join(dir, 'wrong-key.jsonl');
      writeFileSync(file, `${Array.from({ length: 200 }, (_, i) => requestLine(i + 1)).join('\n')}\n`);
      const url = args[args.indexOf('--url') + 1] as string;
      const refused = await run(['submit', '--file', file, '--url', url, '--key', `barge_sk_${'x'.repeat(40)}`]);
      assert.equal(refused.code, 1);
      assert.doesNotMatch(refused.stderr, /^line \d+:/m, 'no line is reported as refused');
      assert.match(refused.stderr, /401/);
      // What was done is still said, and how to go on.
      assert.match(refused.stdout, /^0 submitted, 0 already in .*, 0 refused, of 200 lines$/m);
      assert.match(refused.stdout, /^Stopped: run the same command again to submit the rest\.$/m);

      const closed = `http://127.0.0.1:${await freePort()}`;
      const unreachable = await run(['submit', '--file', file, '--url', closed, '--key', `barge_sk_${'x'.repeat(40)}`]);
      assert.equal(unreachable.code, 3);
      assert.match(unreachable.stderr, /did not answer/);
      assert.match(unreachable.stdout, /^Stopped: run the same command again/m);
    });
  });
}

/**
 * A TCP proxy in front of `target` that counts the connections open at once and cuts the first one
 * when the service's first answer on it arrives (not passed on): the client is then owed every
 * request it had sent there, whatever the service made of them.
 */
async function cuttingProxy(target: URL) {
  let open = 0;
  let mostOpen = 0;
  let accepted = 0;
  let owedAtCut = 0;
  const server = createServer((client) => {
    const first = ++accepted === 1;
    open++;
    mostOpen = Math.max(mostOpen, open);
    let counted = false;
    const closed = () => {
      if (!counted) open--;
      counted = true;
    };
    const upstream = connect(Number(target.port), target.hostname);
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.once('close', () => {
      closed();
      upstream.destroy();
    });
    upstream.once('close', () => client.destroy());
    let sent = '';
    client.on('data', (chunk: Buffer) => {
      if (first) sent += chunk.toString('latin1');
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (first && owedAtCut === 0) {
        owedAtCut = sent.split('POST /cargo/load ').length - 1;
        closed();
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mostOpen: () => mostOpen,
    owedAtCut: () => owedAtCut,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
