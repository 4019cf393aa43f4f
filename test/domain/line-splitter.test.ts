/**
 * The line splitter of the bulk submit's reader and of result downloads (src/domain/line-splitter.ts):
 * the same lines however the bytes are cut into chunks, down to one byte a chunk.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LineSplitter } from '../../src/domain/line-splitter.js';

/** Every line of `bytes` fed `size` bytes at a time, the last line (if any) included. */
function split(bytes: Buffer, size: number): string[] {
  const splitter = new LineSplitter();
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += size) lines.push(...splitter.push(bytes.subarray(at, at + size)));
  const last = splitter.end();
  if (last !== null) lines.push(last);
  return lines;
}

const SIZES = [1, 2, 3, 5, 64, 1 << 20];

test('the same lines whatever the chunks, characters of several bytes cut between them', () => {
  const lines = ['{"a":"é✓"}', '', `{"emoji":"${'🚢'.repeat(300)}"}`, '{"z":26}\r'];
  const bytes = Buffer.from(`${lines.join('\n')}\n`);
  for (const size of SIZES) assert.deepEqual(split(bytes, size), lines, `chunks of ${size} bytes`);
});

test('a last line without a newline is given by end(); none when the bytes end with one', () => {
  for (const size of SIZES) {
    assert.deepEqual(split(Buffer.from('{"a":1}\n{"b":2}'), size), ['{"a":1}', '{"b":2}']);
    assert.deepEqual(split(Buffer.from('{"a":1}\n'), size), ['{"a":1}']);
    assert.deepEqual(split(Buffer.from(''), size), []);
  }
});

test('a byte order mark is dropped, also when chunks cut it; bytes that are not UTF-8 read as U+FFFD', () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  for (const size of SIZES) {
    assert.deepEqual(split(Buffer.concat([bom, Buffer.from('{"a":1}\n{"b":2}\n')]), size), ['{"a":1}', '{"b":2}']);
    assert.deepEqual(split(bom, size), []);
    assert.deepEqual(split(Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), size), ['{\ufffd}']);
  }
  // Only at the start: a second line's mark is its own.
  assert.deepEqual(split(Buffer.concat([Buffer.from('a\n'), bom, Buffer.from('b\n')]), 64), ['a', '\ufeffb']);
});

test('a chunk may be reused once push returns (a file read into one buffer)', () => {
  const splitter = new LineSplitter();
  const buffer = Buffer.from('abc');
  assert.deepEqual(splitter.push(buffer), []);
  buffer.write('def');
  assert.deepEqual(splitter.push(Buffer.from('\n')), ['abc']);
});
