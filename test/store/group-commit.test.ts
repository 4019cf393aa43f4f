/** The group-commit writer: writes share a commit, groups capped by rows and bytes, a bad row fails alone, close. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupCommitWriter } from '../../src/store/group-commit.js';

test('concurrent writes share one commit, and each resolves only after it', async () => {
  const commits: number[][] = [];
  let committed = false;
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      commits.push(rows);
      committed = true;
    },
    { intervalMs: 1, maxRows: 100 },
  );
  const writes = Array.from({ length: 20 }, (_, i) => writer.write(i).then(() => committed));
  assert.deepEqual(await Promise.all(writes), Array(20).fill(true));
  assert.equal(commits.length, 1);
  assert.deepEqual(
    commits[0],
    Array.from({ length: 20 }, (_, i) => i),
  );
  await writer.close();
});

test('rows that arrive during a commit go in the next one as soon as it ends, not intervalMs later', async () => {
  const started: { rows: number[]; at: number }[] = [];
  let release = () => {};
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      started.push({ rows, at: performance.now() });
      if (started.length === 1) await new Promise<void>((resolve) => (release = resolve));
    },
    { intervalMs: 300, maxRows: 100 },
  );
  const first = writer.write(1);
  await new Promise((resolve) => setTimeout(resolve, 350));
  assert.equal(started.length, 1, 'the first row waits intervalMs for others, then commits');
  const second = writer.write(2);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const ended = performance.now();
  release();
  await Promise.all([first, second]);
  assert.deepEqual(
    started.map((s) => s.rows),
    [[1], [2]],
  );
  const waited = (started[1]?.at ?? 0) - ended;
  assert.ok(waited < 100, `the second group began ${waited.toFixed(0)} ms after the first ended`);
  await writer.close();
});

test('groups are capped at maxRows', async () => {
  const sizes: number[] = [];
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      sizes.push(rows.length);
    },
    { intervalMs: 1, maxRows: 8 },
  );
  await Promise.all(Array.from({ length: 20 }, (_, i) => writer.write(i)));
  assert.ok(sizes.every((n) => n <= 8));
  assert.equal(
    sizes.reduce((a, b) => a + b, 0),
    20,
  );
  await writer.close();
});

test('a row the database refuses fails alone; the rest of its group commits', async () => {
  const stored: number[] = [];
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      if (rows.includes(13)) throw new Error('row 13 violates a constraint');
      stored.push(...rows);
    },
    { intervalMs: 1, maxRows: 100 },
  );
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => writer.write(i)));
  assert.equal(outcomes.filter((o) => o.status === 'rejected').length, 1);
  assert.equal(outcomes[13]?.status, 'rejected');
  assert.deepEqual(
    [...stored].sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i).filter((i) => i !== 13),
  );
  await writer.close();
});

test('with refusedRows, the rows it names fail and the rest commit again as one group', async () => {
  const commits: number[][] = [];
  const refusal = new Error('key taken');
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      if (rows.includes(13) || rows.includes(7)) throw new Error('a constraint');
      commits.push(rows);
    },
    {
      intervalMs: 1,
      maxRows: 100,
      refusedRows: async (rows) => new Map(rows.filter((r) => r === 13 || r === 7).map((r) => [r, refusal])),
    },
  );
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => writer.write(i)));
  assert.deepEqual(
    outcomes.flatMap((o, i) => (o.status === 'rejected' ? [[i, o.reason]] : [])),
    [
      [7, refusal],
      [13, refusal],
    ],
  );
  // One more transaction for the other eighteen, not eighteen.
  assert.deepEqual(commits, [Array.from({ length: 20 }, (_, i) => i).filter((i) => i !== 7 && i !== 13)]);
  await writer.close();
});

test('a refused row fails only after the rest of its group committed', async () => {
  const stored = new Set<number>();
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      if (rows.includes(2)) throw new Error('a constraint');
      await new Promise((resolve) => setTimeout(resolve, 5));
      for (const r of rows) stored.add(r);
    },
    { intervalMs: 1, maxRows: 100, refusedRows: async () => new Map([[2, new Error('a repeat of 1')]]) },
  );
  const [one, two] = [writer.write(1), writer.write(2)];
  // The refused row's caller looks for the row it repeats: it is there.
  await assert.rejects(
    two.catch((err) => Promise.reject(new Error(`${err.message}; 1 stored: ${stored.has(1)}`))),
    {
      message: 'a repeat of 1; 1 stored: true',
    },
  );
  await one;
  await writer.close();
});

test('close commits what is queued and refuses new writes', async () => {
  const stored: number[] = [];
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      stored.push(...rows);
    },
    { intervalMs: 50, maxRows: 100 },
  );
  const pending = [writer.write(1), writer.write(2)];
  await writer.close();
  await Promise.all(pending);
  assert.deepEqual(stored, [1, 2]);
  await assert.rejects(writer.write(3), /closed/);
});

test('groups are capped by bytes too; a row larger than the cap goes alone', async () => {
  const groups: number[][] = [];
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      groups.push(rows);
    },
    { intervalMs: 1, maxRows: 100, maxBytes: 10, rowBytes: (row) => row },
  );
  // Sizes 4, 4, 4, 25, 3, 3: the 10-byte cap closes each group before it would pass it.
  await Promise.all([4, 4, 4, 25, 3, 3].map((n) => writer.write(n)));
  assert.deepEqual(groups, [[4, 4], [4], [25], [3, 3]]);
  await writer.close();
});

test('with maxInFlight, the next group commits while the last is still committing; close waits for both', async () => {
  let open = 0;
  let mostAtOnce = 0;
  const releases: (() => void)[] = [];
  const groups: number[][] = [];
  const writer = new GroupCommitWriter<number>(
    async (rows) => {
      open++;
      mostAtOnce = Math.max(mostAtOnce, open);
      await new Promise<void>((resolve) => releases.push(resolve));
      groups.push(rows);
      open--;
    },
    { intervalMs: 1, maxRows: 100, maxInFlight: 2 },
  );
  const first = writer.write(1);
  await new Promise((resolve) => setTimeout(resolve, 20)); // the first group is committing
  const second = writer.write(2);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(mostAtOnce, 2, 'the second group did not wait for the first');
  const third = writer.write(3); // no room: waits for a group to finish
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(releases.length, 2);
  const closed = writer.close();
  for (let i = 0; releases.length > 0 || i < 3; i++) {
    releases.shift()?.();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await closed;
  await Promise.all([first, second, third]);
  assert.deepEqual(groups.flat().sort(), [1, 2, 3]);
  assert.equal(mostAtOnce, 2, 'never more than maxInFlight at once');
});
