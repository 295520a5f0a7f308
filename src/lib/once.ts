/**
 * `build`, run on the first call and its value kept: for a schema only some operations use, so that
 * the modules that declare it build nothing until one of them is built (src/http/operations.ts).
 */
export function once<T>(build: () => T): () => T {
  let built = false;
  let value: T;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value;
  };
}

/**
 * `load`, kept once it has finished: what a dynamic import makes (an operation, the document's
 * handlers, the MCP server). Until then every call awaits a promise of its own, never one another
 * request's handler made: in workerd, a request that awaits another request's still-pending promise
 * runs on, once it settles, in that request's I/O context, where its own I/O fails ("Cannot perform
 * I/O on behalf of a different request"). The deployed build loads a module's chunk by a real
 * import, pending across requests (scripts/build.mjs), so concurrent first callers each run `load`
 * (the runtime evaluates the module once) and the first value made is kept. A load that fails keeps
 * nothing: the next call tries again.
 */
export function loadedOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: { value: T } | undefined;
  return async () => {
    if (loaded) return loaded.value;
    const value = await load();
    loaded ??= { value };
    return loaded.value;
  };
}

/** `loadedOnce` for each key: `load(key)`, kept per key once it has finished. */
export function loadedOncePer<K extends object, T>(load: (key: K) => Promise<T>): (key: K) => Promise<T> {
  const loaded = new WeakMap<K, { value: T }>();
  return async (key) => {
    const done = loaded.get(key);
    if (done) return done.value;
    const value = await load(key);
    if (!loaded.has(key)) loaded.set(key, { value });
    return (loaded.get(key) as { value: T }).value;
  };
}
