/**
 * Bounded caches on a Map: every cache of this service (keys, failed logins, storage counters,
 * role sessions, bucket regions, host addresses, signing keys) keeps at most so many entries, and
 * the oldest goes first. Every folder may use this, like ports.ts.
 */

/** Sets an entry as the newest of a bounded map, dropping the oldest when full. */
export function rememberBounded<K, V>(map: Map<K, V>, key: K, value: V, maxEntries: number): void {
  map.delete(key);
  if (map.size >= maxEntries) {
    // Maps iterate in insertion order: the first entry is the oldest.
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
