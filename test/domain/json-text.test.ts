/** Reading members of a JSON object from its text, exactly as written (jsonMemberText, jsonMembersText). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jsonMembersText, jsonMemberText } from '../../src/domain/json-text.js';

describe('jsonMemberText', () => {
  test('returns the member as written: key order, integer-like keys, number literals, unicode, escapes', () => {
    const metadata =
      '{"z":1,"10":"ten","2":"two","a":12345678901234567890123,"e":1.0e2,"u":"日本語 é 😀","s":"\\u00e9\\n\\"q\\""}';
    const body = `{"params":{"model":"svc-mock"},"metadata":${metadata},"result_ttl_seconds":3600}`;
    assert.equal(jsonMemberText(body, 'metadata'), metadata);
    // A parse/stringify round trip would have changed all of these.
    assert.notEqual(JSON.stringify(JSON.parse(metadata)), metadata);
  });

  test('drops whitespace between tokens but keeps it inside strings', () => {
    const body = '\n {\r\n\t"metadata" :\n { "a" : [ 1 , 2 ] ,\t"b" : " x  y " } ,\n "params" : { } \n}\n';
    assert.equal(jsonMemberText(body, 'metadata'), '{"a":[1,2],"b":" x  y "}');
    assert.equal(jsonMemberText(body, 'params'), '{}');
  });

  test('finds members after values holding brackets, quotes and backslashes in strings', () => {
    const body = String.raw`{"p":{"t":"}]\"{[\\","u":["]",{"k":"\\"}]},"q":"\\\\","metadata":{"ok":true}}`;
    assert.doesNotThrow(() => JSON.parse(body));
    assert.equal(jsonMemberText(body, 'metadata'), '{"ok":true}');
    assert.equal(jsonMemberText(body, 'q'), String.raw`"\\\\"`);
  });

  test('scalars, null, and the last of repeated members (as JSON.parse does)', () => {
    assert.equal(jsonMemberText('{"metadata":null}', 'metadata'), 'null');
    assert.equal(jsonMemberText('{"a":-1.5e-3,"b":true}', 'a'), '-1.5e-3');
    assert.equal(jsonMemberText('{"a":-1.5e-3,"b":true}', 'b'), 'true');
    assert.equal(jsonMemberText('{"metadata":{"a":1},"metadata":{"b":2}}', 'metadata'), '{"b":2}');
  });

  test('matches an escaped member name by its value', () => {
    assert.equal(jsonMemberText('{"\\u006detadata":{"a":1}}', 'metadata'), '{"a":1}');
  });

  test('undefined when missing or when the top level is not an object', () => {
    assert.equal(jsonMemberText('{"params":{"metadata":{}}}', 'metadata'), undefined);
    assert.equal(jsonMemberText('{}', 'metadata'), undefined);
    assert.equal(jsonMemberText('[{"metadata":1}]', 'metadata'), undefined);
    assert.equal(jsonMemberText('"metadata"', 'metadata'), undefined);
  });

  test('skips a leading byte-order mark', () => {
    assert.equal(jsonMemberText('\ufeff{"metadata":{"a":1}}', 'metadata'), '{"a":1}');
  });

  test('handles deep nesting without recursion', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    assert.equal(jsonMemberText(`{"metadata":{"d":${deep}},"x":1}`, 'x'), '1');
  });
});

describe('jsonMembersText', () => {
  test('several members in one pass, each as written; those missing are left out; the last of a repeated one wins', () => {
    const body = '{"success":true,"response":{"n":12345678901234567890},"metadata":{"2":1,"b": 2},"metadata":{"b":3}}';
    assert.deepEqual(
      jsonMembersText(body, ['response', 'metadata', 'error_message']),
      new Map([
        ['response', '{"n":12345678901234567890}'],
        ['metadata', '{"b":3}'],
      ]),
    );
    assert.deepEqual(jsonMembersText('[1]', ['response']), new Map());
  });
});
