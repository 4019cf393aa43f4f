/**
 * Ids of the provider-compatible endpoints, in the forms the providers' own take (`msgbatch_…`,
 * `batch_…`, `file-…`), each a time-ordered ULID so that lists page by id, newest first.
 */
import { newUlid } from '../domain/ids.js';

const PREFIXES = { messageBatch: 'msgbatch_', batch: 'batch_', file: 'file-' } as const;
export type CompatIdKind = keyof typeof PREFIXES;

export function newCompatId(kind: CompatIdKind, now: number): string {
  return `${PREFIXES[kind]}${newUlid(now)}`;
}

const GRAMMARS: Record<CompatIdKind, RegExp> = {
  messageBatch: /^msgbatch_[0-9a-z]{26}$/,
  batch: /^batch_[0-9a-z]{26}$/,
  file: /^file-[0-9a-z]{26}$/,
};

/** An id of this kind's grammar; anything else names nothing, and is not looked up. */
export function isCompatId(kind: CompatIdKind, value: string): boolean {
  return GRAMMARS[kind].test(value);
}
