import { monotonicFactory } from 'ulid';

// ULIDs sort by creation time, which keeps primary-key inserts append-only in both databases.
const nextUlid = monotonicFactory();

export type IdPrefix = 'crg' | 'prj' | 'key' | 'bat' | 'job' | 'dlv' | 'att' | 'conn';

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${nextUlid(now).toLowerCase()}`;
}

const CARGO_ID = /^crg_[0-9a-hjkmnp-tv-z]{26}$/;

export function isCargoId(value: string): boolean {
  return CARGO_ID.test(value);
}
