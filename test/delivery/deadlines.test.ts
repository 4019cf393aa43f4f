/** The webhook requests' deadlines: one timer aborts each request once its deadline has passed, in the order due. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestDeadlines, SWEEP_MS } from '../../src/delivery/webhook/deadlines.js';
import { sleep } from '../helpers/wait.js';

test('a request is aborted once its deadline has passed, within a sweep; one that is done is not', async () => {
  const deadlines = new RequestDeadlines(50);
  const started = performance.now();
  const late = deadlines.start();
  const finished = deadlines.start();
  let lateAbortedAfter: number | null = null;
  let finishedAborted = false;
  late.signal.once('abort', () => {
    lateAbortedAfter = performance.now() - started;
  });
  finished.signal.once('abort', () => {
    finishedAborted = true;
  });
  finished.done();
  await sleep(50 + 3 * SWEEP_MS);
  assert.ok(lateAbortedAfter !== null && lateAbortedAfter >= 50 && lateAbortedAfter <= 50 + 2 * SWEEP_MS + 50);
  assert.equal(finishedAborted, false);
  late.done();
});

test('deadlines abort in the order they fall due, and later ones wait', async () => {
  let now = 0;
  const deadlines = new RequestDeadlines(1000, () => now);
  const aborted: number[] = [];
  const first = deadlines.start();
  now = 500;
  const second = deadlines.start();
  first.signal.once('abort', () => aborted.push(1));
  second.signal.once('abort', () => aborted.push(2));
  now = 1200;
  await sleep(2 * SWEEP_MS);
  assert.deepEqual(aborted, [1]);
  now = 1600;
  await sleep(2 * SWEEP_MS);
  assert.deepEqual(aborted, [1, 2]);
});
