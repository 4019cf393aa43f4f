/**
 * bench:validation: whether accepting a request stays linear in its body. For each shape that a
 * tenant can grow (text blocks in a message, records, tools with their schemas, a base64 image, a
 * cached system prefix), a body of 1x and of 10x its size is sent to `barge serve --role api`
 * (SQLite, loopback) one request at a time; the server's CPU a request is read from /proc, and the
 * report prints the 10x/1x ratio (goal: at most 10, i.e. no worse than linear).
 *
 * Usage: npm run bench:validation -- [--requests 200] [--no-build]
 * Exit:  1 when a run breaks; the goal is reported, not enforced.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { METADATA, MODEL_INPUT } from './lib/cargo.js';
import { installCleanup, makeTempDir, removeTempDir, runMain } from './lib/lifecycle.js';
import { bounded } from './lib/options.js';
import { cpuSecondsOf } from './lib/proc.js';
import { bargeEnv, ROOT, startServe, stopChild } from './lib/processes.js';
import { goal, machineLine } from './lib/report.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const CHILD_TIMEOUT_MS = 15_000;
const GOAL_RATIO = 10;

/** A body that grows with `n`: each shape at n = 1x and n = 10x. */
const SHAPES: Record<string, { base: number; body: (n: number) => unknown }> = {
  'text blocks': {
    base: 90,
    body: (n) => params({ messages: [{ role: 'user', content: texts(n) }] }),
  },
  records: {
    base: 500,
    body: (n) => ({
      params: { model: 'svc-mock', max_tokens: 64 },
      records: Array.from({ length: n }, (_, i) => ({
        recordId: `r${i}`,
        modelInput: { messages: [{ role: 'user', content: `question ${i}` }] },
      })),
      metadata: METADATA,
    }),
  },
  tools: {
    base: 12,
    body: (n) =>
      params({
        tools: Array.from({ length: n }, (_, i) => ({
          name: `tool_${i}`,
          description: 'A tool with a schema of some size',
          input_schema: {
            type: 'object',
            properties: Object.fromEntries(
              Array.from({ length: 20 }, (_, p) => [`p${p}`, { type: 'string', description: 'a field' }]),
            ),
            required: ['p0'],
          },
        })),
        tool_choice: { type: 'tool', name: 'tool_0' },
      }),
  },
  'base64 image': {
    base: 100_000,
    body: (n) =>
      params({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64(n) } },
              { type: 'text', text: 'What is in the picture?' },
            ],
          },
        ],
      }),
  },
  'cached prefix': {
    base: 20_000,
    body: (n) =>
      params({
        system: [{ type: 'text', text: 'x '.repeat(n / 2), cache_control: { type: 'ephemeral' } }],
      }),
  },
};

function params(extra: Record<string, unknown>): unknown {
  return { params: { model: 'svc-mock', ...MODEL_INPUT, ...extra }, metadata: METADATA };
}

function texts(n: number): { type: 'text'; text: string }[] {
  return Array.from({ length: n }, (_, i) => ({ type: 'text', text: `paragraph ${i} of the message` }));
}

function base64(bytes: number): string {
  return Buffer.alloc(Math.floor((bytes * 3) / 4), 0x5a).toString('base64');
}

interface Options {
  requests: number;
  build: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: { requests: { type: 'string' }, 'no-build': { type: 'boolean', default: false } },
  });
  return { requests: bounded('requests', values.requests ?? '200', 10, 10_000), build: !values['no-build'] };
}

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args, '--json'], {
    env,
    timeout: CHILD_TIMEOUT_MS,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** The server's CPU microseconds a request, over `count` sequential POSTs of `body`. */
async function cpuPerRequest(url: string, key: string, pid: number, body: string, count: number): Promise<number> {
  const post = async () => {
    const res = await fetch(`${url}/cargo/load`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body,
    });
    if (res.status !== 200) throw new Error(`POST /cargo/load answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };
  for (let i = 0; i < 5; i++) await post(); // warm-up: compiled paths, caches
  const before = cpuSecondsOf(pid);
  for (let i = 0; i < count; i++) await post();
  return ((cpuSecondsOf(pid) - before) * 1e6) / count;
}

async function main(): Promise<void> {
  const options = parseOptions();
  installCleanup('bench:validation', 600_000, { onSignal: 'graceful', childTimeoutMs: CHILD_TIMEOUT_MS });
  if (options.build) await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: ROOT, timeout: 120_000 });
  const dir = makeTempDir('barge-bench-validation-');
  try {
    const env = bargeEnv({
      BARGE_DATABASE_URL: `sqlite:${join(dir, 'barge.sqlite')}`,
      BARGE_LOG_LEVEL: 'warn',
      BARGE_RATE_LIMIT_MAX: '1000000000',
      BARGE_BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
      HOST: '127.0.0.1',
    });
    await cli(['project', 'create', 'bench'], env);
    const { key } = await cli(['key', 'create', 'bench', '--name', 'bench'], env);
    const service = await startServe({
      name: 'barge serve',
      label: 'service',
      exitedWhen: 'before listening',
      cli: CLI,
      role: 'api',
      nodeFlags: [],
      env,
      timeoutMs: CHILD_TIMEOUT_MS,
    });
    const lines = ['', `bench:validation  ${new Date().toISOString()}`, machineLine(), ''];
    lines.push(
      `  ${'shape'.padEnd(16)}${'1x bytes'.padStart(12)}${'µs/req'.padStart(10)}${'10x µs/req'.padStart(12)}  ratio`,
    );
    try {
      for (const [name, shape] of Object.entries(SHAPES)) {
        const small = JSON.stringify(shape.body(shape.base));
        const large = JSON.stringify(shape.body(shape.base * 10));
        const pid = service.child.pid ?? 0;
        const one = await cpuPerRequest(service.url as string, String(key), pid, small, options.requests);
        const ten = await cpuPerRequest(
          service.url as string,
          String(key),
          pid,
          large,
          Math.ceil(options.requests / 4),
        );
        const ratio = ten / one;
        lines.push(
          `  ${name.padEnd(16)}${String(small.length).padStart(12)}${one.toFixed(0).padStart(10)}${ten.toFixed(0).padStart(12)}  ` +
            `${ratio.toFixed(2)} (goal <= ${GOAL_RATIO}: ${goal(ratio <= GOAL_RATIO)})`,
        );
      }
    } finally {
      await stopChild(service.child, CHILD_TIMEOUT_MS);
    }
    process.stdout.write(`${lines.join('\n')}\n\n`);
  } finally {
    removeTempDir(dir);
  }
}

runMain('bench:validation', main, 'message');
