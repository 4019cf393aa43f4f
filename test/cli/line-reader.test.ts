/**
 * The bulk submit's reader of its input (src/cli/cargo-map.ts LineReader): every line, numbered
 * from 1, whatever the chunks cut: a character of several bytes, a CRLF, a line many chunks long,
 * a last line without a newline, a byte order mark, bytes that are not UTF-8.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { LineReader } from '../../src/cli/cargo-map.js';

const dir = mkdtempSync(join(tmpdir(), 'barge-line-reader-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function readAll(content: string | Buffer): { line: number; text: string }[] {
  const path = join(dir, `input-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, content);
  const reader = new LineReader(path);
  const lines: { line: number; text: string }[] = [];
  for (let next = reader.next(); next !== null; next = reader.next()) lines.push(next);
  assert.equal(reader.next(), null);
  reader.close();
  return lines;
}

test('every line whatever the chunks cut, a long one and characters of several bytes included', () => {
  const long = `{"p":"${'é'.repeat(40_000)}"}`; // 80 KB: several chunks, each cut inside a character
  const lines = ['{"a":1}', '', `{"emoji":"${'🚢'.repeat(5000)}"}`, long, '{"z":26}'];
  assert.deepEqual(
    readAll(`${lines.join('\n')}\n`),
    lines.map((text, i) => ({ line: i + 1, text })),
  );
});

test('CRLF line ends, and a last line without one', () => {
  assert.deepEqual(readAll('{"a":1}\r\n{"b":2}\r\n{"c":3}'), [
    { line: 1, text: '{"a":1}' },
    { line: 2, text: '{"b":2}' },
    { line: 3, text: '{"c":3}' },
  ]);
});

test('a byte order mark is not part of the first line; bytes that are not UTF-8 read as U+FFFD', () => {
  assert.deepEqual(readAll(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n{"b":2}\n')])), [
    { line: 1, text: '{"a":1}' },
    { line: 2, text: '{"b":2}' },
  ]);
  assert.deepEqual(readAll(Buffer.from([0x7b, 0xff, 0x7d, 0x0a])), [{ line: 1, text: '{\ufffd}' }]);
});

test('an empty file has no lines; a lone newline is one empty line', () => {
  assert.deepEqual(readAll(''), []);
  assert.deepEqual(readAll('\n'), [{ line: 1, text: '' }]);
});

test('fifty thousand short lines, each with its number', () => {
  const count = 50_000;
  const lines = readAll(Array.from({ length: count }, (_, i) => `{"i":${i}}\n`).join(''));
  assert.equal(lines.length, count);
  assert.deepEqual(lines.at(-1), { line: count, text: `{"i":${count - 1}}` });
  assert.ok(lines.every(({ line, text }) => text === `{"i":${line - 1}}`));
});
