/**
 * Maps an isolate keeps between requests (the key cache, last-use marks, the OpenAPI document per
 * origin) must not grow with traffic: `setBounded` keeps only the newest `max` entries.
 */

/**
 * Sets `key` as the newest entry of `map` (re-inserted, so the map stays in insertion order)
 * and drops the oldest entries beyond `max`.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= max) break;
    map.delete(oldest);
  }
}
