/** The limits of POST /cargo/load and the rules its schema cannot express: metadata, messages or records, ids. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkLoadRules, checkMetadata, LIMITS } from '../../src/domain/cargo-request.js';
import { jsonValueOfLength, metadataOfBytes, metadataWithEntries } from '../helpers/metadata.js';

const messages = [{ role: 'user', content: 'hi' }];
const paths = (problems: { path: string }[]) => problems.map((p) => p.path);

describe('LIMITS', () => {
  test('match the interface document and decisions.md', () => {
    assert.deepEqual(
      {
        defaultMaxTokens: LIMITS.defaultMaxTokens,
        metadataMaxEntries: LIMITS.metadataMaxEntries,
        metadataMaxKeyLength: LIMITS.metadataMaxKeyLength,
        metadataMaxValueLength: LIMITS.metadataMaxValueLength,
        metadataMaxBytes: LIMITS.metadataMaxBytes,
        ttlMinSeconds: LIMITS.ttlMinSeconds,
        ttlMaxSeconds: LIMITS.ttlMaxSeconds,
        defaultTtlSeconds: LIMITS.defaultTtlSeconds,
        maxRecords: LIMITS.maxRecords,
      },
      {
        defaultMaxTokens: 1024,
        metadataMaxEntries: 50,
        metadataMaxKeyLength: 128,
        metadataMaxValueLength: 2048,
        metadataMaxBytes: 4096,
        ttlMinSeconds: 3600,
        ttlMaxSeconds: 2_592_000,
        defaultTtlSeconds: 2_592_000,
        maxRecords: 10_000,
      },
    );
    assert.ok(Object.isFrozen(LIMITS));
  });
});

describe('checkMetadata', () => {
  test('50 entries pass, 51 are rejected at /metadata', () => {
    assert.deepEqual(checkMetadata(metadataWithEntries(50)), []);
    const problems = checkMetadata(metadataWithEntries(51));
    assert.deepEqual(paths(problems), ['/metadata']);
    assert.match(problems[0]?.message ?? '', /51 entries; at most 50/);
  });

  test('a 128-character key passes, 129 is rejected naming the key', () => {
    assert.deepEqual(checkMetadata({ ['k'.repeat(128)]: 1 }), []);
    const key = 'k'.repeat(129);
    const problems = checkMetadata({ [key]: 1 });
    assert.deepEqual(paths(problems), [`/metadata/${key}`]);
    assert.match(problems[0]?.message ?? '', /key is longer than 128 characters/);
  });

  test('key length counts characters, not UTF-16 units', () => {
    // 128 emoji are 256 UTF-16 units but 128 characters.
    assert.deepEqual(checkMetadata({ ['😀'.repeat(128)]: 1 }), []);
    assert.equal(checkMetadata({ ['😀'.repeat(129)]: 1 }).length, 1);
  });

  test('a 2048-character string value passes, 2049 is rejected', () => {
    assert.deepEqual(checkMetadata({ v: 'x'.repeat(2048) }), []);
    const problems = checkMetadata({ v: 'x'.repeat(2049) });
    assert.deepEqual(paths(problems), ['/metadata/v']);
    assert.match(problems[0]?.message ?? '', /value is longer than 2048 characters/);
  });

  test('a string value is measured without its JSON quotes or escapes', () => {
    // 1100 quote characters are 2202 characters once JSON-escaped; the limit is on the string itself.
    assert.deepEqual(checkMetadata({ v: '"'.repeat(1100) }), []);
    assert.deepEqual(checkMetadata({ v: '😀'.repeat(1000) }), []);
  });

  test('a non-string value is measured by its JSON text: 2048 passes, 2049 is rejected', () => {
    assert.deepEqual(checkMetadata({ v: jsonValueOfLength(2048) }), []);
    assert.deepEqual(paths(checkMetadata({ v: jsonValueOfLength(2049) })), ['/metadata/v']);
    const object = { a: 'z'.repeat(2041) }; // {"a":"…"} is 2049 characters
    assert.equal(JSON.stringify(object).length, 2049);
    assert.deepEqual(paths(checkMetadata({ v: object })), ['/metadata/v']);
    assert.deepEqual(checkMetadata({ n: 1.5, t: true, z: null, o: {}, l: [] }), []);
  });

  test('4096 bytes of JSON pass and 4097 are rejected, counted in UTF-8 bytes', () => {
    assert.deepEqual(checkMetadata(metadataOfBytes(4096)), []);
    const problems = checkMetadata(metadataOfBytes(4097));
    assert.deepEqual(paths(problems), ['/metadata']);
    assert.match(problems[0]?.message ?? '', /4097 bytes as JSON; at most 4096/);
  });

  test('the byte limit applies to the JSON text that will be stored when it is given', () => {
    const metadata = { a: 1 };
    assert.deepEqual(checkMetadata(metadata, '{"a":1}'), []);
    assert.deepEqual(paths(checkMetadata(metadata, `{"a":1${'0'.repeat(4090)}}`)), ['/metadata']);
  });

  test('a key containing / or ~ is named as a JSON pointer', () => {
    const problems = checkMetadata({ [`a/b~${'c'.repeat(130)}`]: 1 });
    assert.deepEqual(paths(problems), [`/metadata/a~1b~0${'c'.repeat(130)}`]);
  });

  test('reports every problem at once', () => {
    const metadata: Record<string, unknown> = metadataWithEntries(51);
    metadata['k'.repeat(129)] = 'v'.repeat(2049);
    const problems = checkMetadata(metadata);
    assert.equal(problems.filter((p) => p.path === '/metadata').length, 1, JSON.stringify(problems));
    assert.equal(problems.filter((p) => p.path === `/metadata/${'k'.repeat(129)}`).length, 2);
  });

  test('a value nested too deeply to stringify is a problem, not a crash', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    const problems = checkMetadata({ deep });
    assert.ok(
      problems.some((p) => p.path === '/metadata/deep'),
      JSON.stringify(problems),
    );
    assert.ok(
      problems.some((p) => p.path === '/metadata'),
      JSON.stringify(problems),
    );
  });

  test('prototype-looking keys are ordinary keys', () => {
    const metadata = JSON.parse('{"__proto__":{"x":1},"constructor":"c","toString":2}');
    assert.deepEqual(checkMetadata(metadata), []);
    assert.equal(checkMetadata(JSON.parse(`{"__proto__":"${'x'.repeat(2049)}"}`)).length, 1);
  });
});

describe('checkLoadRules', () => {
  test('a plain request with messages passes', () => {
    assert.deepEqual(checkLoadRules({ params: { messages } }), []);
  });

  test('neither params.messages nor records is rejected at /params/messages', () => {
    assert.deepEqual(paths(checkLoadRules({ params: {} })), ['/params/messages']);
  });

  test('records together with params.messages are rejected at /records', () => {
    assert.deepEqual(paths(checkLoadRules({ params: { messages }, records: [{ recordId: 'a' }] })), ['/records']);
  });

  test('records alone pass; a repeated recordId is rejected at its index', () => {
    assert.deepEqual(checkLoadRules({ params: {}, records: [{ recordId: 'a' }, { recordId: 'b' }] }), []);
    const problems = checkLoadRules({
      params: {},
      records: [{ recordId: 'a' }, { recordId: 'b' }, { recordId: 'a' }, { recordId: 'b' }],
    });
    assert.deepEqual(paths(problems), ['/records/2/recordId', '/records/3/recordId']);
    assert.match(problems[0]?.message ?? '', /duplicates 'a'/);
  });

  test('record ids differing only in case are distinct', () => {
    assert.deepEqual(checkLoadRules({ params: {}, records: [{ recordId: 'a' }, { recordId: 'A' }] }), []);
  });

  test('metadata problems are included, measured on the given JSON text', () => {
    assert.deepEqual(paths(checkLoadRules({ params: { messages }, metadata: metadataWithEntries(51) })), ['/metadata']);
    assert.deepEqual(checkLoadRules({ params: { messages }, metadata: metadataWithEntries(50) }), []);
    assert.deepEqual(
      paths(checkLoadRules({ params: { messages }, metadata: { a: 1 }, metadataJson: `{"a":${'1'.repeat(4100)}}` })),
      ['/metadata'],
    );
  });

  test('every problem is reported together', () => {
    const problems = checkLoadRules({
      params: { messages },
      records: [{ recordId: 'a' }, { recordId: 'a' }],
      metadata: { ['k'.repeat(129)]: 1 },
    });
    assert.deepEqual(
      paths(problems).sort(),
      [`/metadata/${'k'.repeat(129)}`, '/records', '/records/1/recordId'].sort(),
    );
  });
});
