/** Ids: a type prefix and a lowercase ULID (`crg_…`, `prj_…`), and the grammar of a cargo id. */
import { randomFillSync } from 'node:crypto';
import { encodeTime, monotonicFactory } from 'ulid';

/**
 * Random numbers for ids from a pooled CSPRNG buffer: ulid's default asks the OS for randomness
 * once per character (16 calls per new id), which was 7% of the submit path's CPU.
 */
const pool = new Uint32Array(1024);
let next = pool.length;
function pooledRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 2 ** 32;
}

// ULIDs sort by creation time, which keeps primary-key inserts append-only in both databases.
const nextUlid = monotonicFactory(pooledRandom);
export type IdPrefix = 'crg' | 'prj' | 'key' | 'adt' | 'ses' | 'bat' | 'job' | 'dlv' | 'att' | 'conn' | 'out' | 'rcv';

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${nextUlid(now).toLowerCase()}`;
}

/**
 * A lowercase ULID from the same monotonic factory, for ids whose prefix another API fixes (the
 * provider-compatible endpoints' `msgbatch_…`, `batch_…`, `file-…`).
 */
export function newUlid(now: number = Date.now()): string {
  return nextUlid(now).toLowerCase();
}

const CARGO_ID = /^crg_[0-9a-z]{26}$/;

/** A cargo id's grammar: anything else names no cargo, and is not looked up (a NUL byte is an error in PostgreSQL text). */
export function isCargoId(value: string): boolean {
  return CARGO_ID.test(value);
}

/**
 * The smallest id of a prefix made at `time` (epoch ms): ids sort by the time they were made,
 * which is the row's `created_at` (the same clock reading), so a time range is an id range.
 */
export function firstIdAt(prefix: IdPrefix, time: number): string {
  return `${prefix}_${encodeTime(time, 10).toLowerCase()}${'0'.repeat(16)}`;
}
