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
