/** Metadata of exact sizes, for the tests of the metadata limits. */
import assert from 'node:assert/strict';

/** Metadata with `n` small entries. */
export function metadataWithEntries(n: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
}

/**
 * Metadata whose JSON text is exactly `bytes` bytes of UTF-8 but only about half as many
 * characters (two-byte 'é'), so a limit that counted characters instead of bytes would let it pass.
 * Each value stays well under the per-value limit.
 */
export function metadataOfBytes(bytes: number): Record<string, string> {
  // {"a":"…","b":"…"} is 15 bytes of structure; 'é' is 2 bytes.
  const a = 'é'.repeat(1020);
  const filler = bytes - 15 - 2 * 2040;
  assert.ok(filler >= 0, 'metadataOfBytes needs at least 4095 bytes');
  const metadata = { a, b: 'é'.repeat(1020) + 'x'.repeat(filler) };
  const json = JSON.stringify(metadata);
  assert.equal(Buffer.byteLength(json, 'utf8'), bytes);
  assert.ok(json.length < 4096, 'the character count stays under the byte limit');
  return metadata;
}

/** A JSON value (not a string) whose JSON text is exactly `length` characters. */
export function jsonValueOfLength(length: number): string[] {
  // ["…"] adds 4 characters.
  const value = ['y'.repeat(length - 4)];
  assert.equal(JSON.stringify(value).length, length);
  return value;
}
