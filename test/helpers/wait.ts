/** Waiting in tests: one sleep, one poll-until, one free port, for every suite. */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';

/** A loopback port nobody listens on right now (bind to port 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port from the probe server');
  return address.port;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` accepts its value; fails naming `what` and the last value seen. */
export async function waitFor<T>(
  what: string,
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(value)}`,
      );
    }
    await sleep(options.intervalMs ?? 50);
  }
}

/** Polls `read` until `done` accepts its value, for effects written asynchronously (an assertion). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  try {
    return await waitFor('the condition', read, done, { timeoutMs, intervalMs: 10 });
  } catch (err) {
    assert.fail(err instanceof Error ? err.message : String(err));
  }
}
