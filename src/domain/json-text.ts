/**
 * Reads members of a JSON object straight from its text. Metadata is echoed verbatim (interface
 * document 2.3), and a parse/stringify round trip is not verbatim: it moves integer-like keys
 * ("2", "10") before the others and rounds numbers past 2^53 (a 64-bit id in metadata would come
 * back changed).
 */

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * The text of member `name` of the top-level object in `json`, as sent, less insignificant
 * whitespace: key order, number literals and string escapes stay exactly as the client wrote them.
 * `json` must already have been parsed successfully. Like JSON.parse, the last occurrence of a
 * repeated member wins. Undefined when the top level is not an object or has no such member.
 */
export function jsonMemberText(json: string, name: string): string | undefined {
  let span: [number, number] | undefined;
  eachMember(json, (key, start, end) => {
    if (key === name) span = [start, end];
  });
  return span && withoutWhitespace(json.slice(...span));
}

/** jsonMemberText of several members, in one pass over `json`: those it has, by name. */
export function jsonMembersText(json: string, names: readonly string[]): Map<string, string> {
  const spans = new Map<string, [number, number]>();
  eachMember(json, (key, start, end) => {
    if (names.includes(key)) spans.set(key, [start, end]);
  });
  const texts = new Map<string, string>();
  for (const [key, span] of spans) texts.set(key, withoutWhitespace(json.slice(...span)));
  return texts;
}

/** Each member of the top-level object, in order: its key, and where its value's text starts and ends. */
function eachMember(json: string, visit: (key: string, start: number, end: number) => void): void {
  // A leading byte-order mark is accepted by the body parser, so skip it here too.
  let i = skipWhitespace(json, json.charCodeAt(0) === 0xfeff ? 1 : 0);
  if (json[i] !== '{') return;
  i = skipWhitespace(json, i + 1);
  while (json[i] === '"') {
    const keyEnd = endOfString(json, i);
    const start = skipWhitespace(json, skipWhitespace(json, keyEnd) + 1);
    const end = endOfValue(json, start);
    visit(JSON.parse(json.slice(i, keyEnd)) as string, start, end);
    i = skipWhitespace(json, end);
    if (json[i] === ',') i = skipWhitespace(json, i + 1);
  }
}

function skipWhitespace(json: string, i: number): number {
  while (i < json.length && WHITESPACE.has(json[i] as string)) i++;
  return i;
}

/** `start` is at an opening quote; returns the index just past the closing one. */
function endOfString(json: string, start: number): number {
  let quote = json.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (json[quote - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    quote = json.indexOf('"', quote + 1);
  }
}

function endOfValue(json: string, start: number): number {
  const first = json[start];
  if (first === '"') return endOfString(json, start);
  let i = start;
  if (first === '{' || first === '[') {
    let depth = 0;
    do {
      const c = json[i];
      if (c === '"') {
        i = endOfString(json, i);
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') depth--;
      i++;
    } while (depth > 0);
    return i;
  }
  // A number, true, false or null runs to the next delimiter.
  while (i < json.length && !WHITESPACE.has(json[i] as string) && !',}]'.includes(json[i] as string)) i++;
  return i;
}

function withoutWhitespace(value: string): string {
  let out = '';
  let kept = 0;
  let i = 0;
  while (i < value.length) {
    const c = value[i] as string;
    if (c === '"') {
      i = endOfString(value, i);
      continue;
    }
    if (WHITESPACE.has(c)) {
      out += value.slice(kept, i);
      kept = i + 1;
    }
    i++;
  }
  return out + value.slice(kept);
}
