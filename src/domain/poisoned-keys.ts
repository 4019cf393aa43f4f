/**
 * Keys that secure-json-parse refuses (`__proto__`, or `constructor` holding `prototype`), found
 * in a parsed value without recursion. Linear in the value and light: each node keeps a link to
 * its parent, and the JSON Pointer is built only for the key found (a path string made for every
 * node cost as much as the rest of a 10 MB request's checks). Pure.
 */
import { type ApiError, errors } from './errors.js';

interface Visit {
  node: unknown;
  parent: Visit | null;
  key: string;
}

/** A JSON Pointer segment. */
const pointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at?.parent; at = at.parent) keys.push(pointer(at.key));
  return keys
    .reverse()
    .map((key) => `/${key}`)
    .join('');
}

/** The refusal of the first poisoned key found, or null. */
export function findPoisonedKey(value: unknown): ApiError | null {
  const stack: Visit[] = [{ node: value, parent: null, key: '' }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { node } = visit;
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (child !== null && typeof child === 'object') stack.push({ node: child, parent: visit, key: String(i) });
      }
      continue;
    }
    if (Object.hasOwn(node, '__proto__')) return errors.forbiddenJsonKey('__proto__', pathOf(visit));
    const ctor: unknown = Object.hasOwn(node, 'constructor') ? (node as { constructor: unknown }).constructor : null;
    if (ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) {
      return errors.forbiddenJsonKey('constructor.prototype', pathOf(visit));
    }
    for (const key of Object.keys(node)) {
      const child: unknown = (node as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ node: child, parent: visit, key });
    }
  }
  return null;
}
